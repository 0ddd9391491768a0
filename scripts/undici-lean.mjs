// What the release bundle gives airgap for `undici`: the dispatchers it uses (Agent,
// EnvHttpProxyAgent) with their request API, and nothing else. undici's index.js also loads
// fetch, WebSocket, EventSource, caches and mocks — about 40 ms at every start of every command
// that makes a request, for code airgap never calls. airgap reaches undici only through
// src/net/http.ts (createAgent, requestOn), which needs exactly these; the checkout uses the
// full package, and the single-executable test runs the bundle against real registries.
import Dispatcher from '../node_modules/undici/lib/dispatcher/dispatcher.js';
import api from '../node_modules/undici/lib/api/index.js';
import Agent from '../node_modules/undici/lib/dispatcher/agent.js';
import EnvHttpProxyAgent from '../node_modules/undici/lib/dispatcher/env-http-proxy-agent.js';

// index.js gives every dispatcher request/stream/pipeline/connect/upgrade this way.
Object.assign(Dispatcher.prototype, api);

export { Agent, Dispatcher, EnvHttpProxyAgent };
