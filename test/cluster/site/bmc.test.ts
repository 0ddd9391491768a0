import { describe, expect, it } from 'vitest';
import { bmcUrlProblem } from '../../../src/cluster/site/bmc.js';

describe('bmcUrlProblem', () => {
  it('accepts the schemes baremetal-operator knows', () => {
    for (const u of [
      'redfish-virtualmedia://[fd00::1]:8000/redfish/v1/Systems/1',
      'redfish+https://10.0.0.1/redfish/v1/Systems/1',
      'ipmi://10.0.0.1:623',
      'ilo5-virtualmedia://bmc.example.com/redfish/v1/Systems/1',
    ])
      expect(bmcUrlProblem(u), u).toBeUndefined();
  });

  it('refuses an unbracketed IPv6, an unknown scheme, and a non-URL', () => {
    expect(bmcUrlProblem('redfish-virtualmedia://fd00::1/redfish/v1/Systems/1')).toMatchObject({
      message: expect.stringMatching(/not in brackets/),
      hint: expect.stringMatching(/redfish-virtualmedia:\/\/\[fd00::1\]/),
    });
    expect(bmcUrlProblem('https://10.0.0.1/redfish/v1/Systems/1')?.message).toMatch(/not a BMC driver/);
    expect(bmcUrlProblem('10.0.0.1')?.message).toMatch(/not a URL/);
    expect(bmcUrlProblem('redfish://[fd00::zz]/x')?.message).toMatch(/not a bracketed IPv6/);
  });

  it('puts the port of an unbracketed IPv6 after the brackets in the hint', () => {
    // fd00::1:8000 is also an address: both readings, the port one first.
    expect(bmcUrlProblem('redfish://fd00::1:8000/redfish/v1/Systems/1')?.hint).toBe(
      'write it as redfish://[fd00::1]:8000/… if 8000 is the port, or redfish://[fd00::1:8000]/… if it is part of the address',
    );
    // 62300 cannot be a group of an IPv6 address: it is the port.
    expect(bmcUrlProblem('ipmi://fd00::9:62300')?.hint).toBe('write it as ipmi://[fd00::9]:62300/…');
    // No port: the whole is the address.
    expect(bmcUrlProblem('redfish-virtualmedia://fd00::1/redfish/v1/Systems/1')?.hint).toBe(
      'write it as redfish-virtualmedia://[fd00::1]/… (with a port: [addr]:port)',
    );
  });
});
