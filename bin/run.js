#!/usr/bin/env node
// Node 22.1+ keeps V8's compiled code on disk (in the temporary directory): later starts parse
// nothing again. Node 20 has no such cache and starts as before.
(await import('node:module')).enableCompileCache?.();
const { execute } = await import('@oclif/core');

await execute({ dir: import.meta.url });
