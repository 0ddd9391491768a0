// Lets Node run the simulator's TypeScript directly (type stripping): its imports name `./x.js`,
// as TypeScript wants, and this maps each to `./x.ts` when no such .js file exists.
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { URL, fileURLToPath } from 'node:url';

registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
      const url = new URL(specifier, context.parentURL);
      if (!existsSync(fileURLToPath(url))) return next(`${specifier.slice(0, -3)}.ts`, context);
    }
    return next(specifier, context);
  },
});
