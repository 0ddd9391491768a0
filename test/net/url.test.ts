import { describe, expect, it } from 'vitest';
import { NetError } from '../../src/net/errors.js';
import { hasUrlCredentials, parseHttpUrl, shownUrl } from '../../src/net/url.js';
import { thrown } from '../helpers/realdata.js';

describe('URLs from outside: credentials are never sent, shown or kept', () => {
  it('shows a URL without its user name and password, parsed or not', () => {
    expect(shownUrl('https://u:secret@charts.example/stable')).toBe('https://charts.example/stable');
    expect(shownUrl(new URL('https://u:secret@charts.example/x'))).toBe('https://charts.example/x');
    expect(shownUrl('https://u:secret@[bad')).toBe('https://[bad');
    expect(hasUrlCredentials('https://u@charts.example/')).toBe(true);
    expect(hasUrlCredentials('https://charts.example/@x')).toBe(false);
  });

  it('refuses a URL carrying credentials before any request, without saying them', () => {
    const e = thrown(() => parseHttpUrl('https://admin:hunter2@graph.example/api', 'GRAPH'));
    expect(e.code).toBe(NetError.URL_CREDENTIALS);
    expect(e.exitCode).toBe(2);
    expect(`${e.message} ${e.hint}`).not.toContain('hunter2');
    expect(e.message).toContain('https://graph.example/api');
    const bad = thrown(() => parseHttpUrl('ftp://admin:hunter2@x/', 'GRAPH'));
    expect(bad.code).toBe('GRAPH_URL_INVALID');
    expect(bad.message).not.toContain('hunter2');
  });
});
