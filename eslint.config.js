import { dirname, relative, resolve, sep } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The product's boundaries, enforced here rather than only written down (docs/architecture.md):
 * - product code (src/) never imports the lab, the benchmarks or the tests;
 * - a domain folder (mirror, certs, server, cluster, registry) is entered from outside only through its
 *   index.ts, never by a deep import;
 * - the kits (util, net, config) sit below every domain and import none;
 * - each heavy library has one home: oclif in src/commands and src/cli, undici in src/net and the
 *   registry client, @peculiar/x509 (with the reflect-metadata it needs) in src/certs,
 *   @kubernetes/client-node in src/cluster/kube.ts.
 */
const ROOT = import.meta.dirname;
const DOMAINS = new Set(['mirror', 'certs', 'server', 'cluster', 'registry']);
const KITS = new Set(['util', 'net', 'config']);
const HOMES = {
  '@oclif/core': { dirs: ['src/commands/', 'src/cli/'], why: 'oclif belongs in src/commands and src/cli.' },
  undici: {
    dirs: ['src/net/', 'src/mirror/registry/'],
    why: 'undici stays in src/net and the registry client: use src/net/http.ts.',
  },
  '@peculiar/x509': {
    dirs: ['src/certs/'],
    why: '@peculiar/x509 stays in src/certs: mint through src/certs.',
  },
  'reflect-metadata': {
    dirs: ['src/certs/'],
    why: 'reflect-metadata (a global polyfill @peculiar/x509 needs) is loaded only by src/certs.',
  },
  '@kubernetes/client-node': {
    dirs: ['src/cluster/kube.ts'],
    why: '@kubernetes/client-node stays in src/cluster/kube.ts: use the Kube client.',
  },
};

const posix = (p) => p.split(sep).join('/');

const boundaries = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const file = posix(relative(ROOT, context.filename));
    if (!file.startsWith('src/')) return {};
    const [, from] = file.split('/');
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string') return;
      if (!spec.startsWith('.')) {
        const home = HOMES[spec];
        if (home && !home.dirs.some((d) => file.startsWith(d)))
          context.report({ node, message: `${spec} imported in ${file}: ${home.why}` });
        return;
      }
      const target = posix(relative(ROOT, resolve(dirname(context.filename), spec)));
      if (!target.startsWith('src/')) {
        context.report({
          node,
          message: `product code imports ${target}: the lab, bench/ and test/ never ship.`,
        });
        return;
      }
      const parts = target.split('/');
      const to = parts[1];
      if (to === from || !DOMAINS.has(to)) return;
      if (KITS.has(from)) {
        context.report({
          node,
          message: `src/${from} is a kit below the domains and must not import src/${to}.`,
        });
        return;
      }
      if (parts.length !== 3 || parts[2] !== 'index.js')
        context.report({
          node,
          message: `deep import of ${target} from ${file}: import src/${to}/index.js (add the export there).`,
        });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

/**
 * YAML from outside is read through one bounded loader (src/config/yaml-load.ts: a byte, node,
 * depth and alias limit, and a budget per source): js-yaml's `load` and `loadAll` are called only
 * in the config kit. Its types, schemas and `dump` may be imported anywhere.
 */
const YAML_LOADERS = new Set(['load', 'loadAll', 'parseEvents', 'constructFromEvents', 'eventsToAst']);
const YAML_LOADER_MESSAGE =
  "js-yaml's load/loadAll (and its parseEvents, constructFromEvents, eventsToAst) read without limits: use parseYaml or parseYamlDocuments (src/config/yaml-load.ts), or loadYamlWithPositions.";
const yamlLoader = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const file = posix(relative(ROOT, context.filename));
    if (!file.startsWith('src/') || file.startsWith('src/config/')) return {};
    const modules = new Set();
    return {
      ImportDeclaration(node) {
        if (node.source.value !== 'js-yaml') return;
        for (const s of node.specifiers) {
          if (s.type === 'ImportSpecifier' && YAML_LOADERS.has(s.imported.name))
            context.report({ node: s, message: YAML_LOADER_MESSAGE });
          else if (s.type !== 'ImportSpecifier') modules.add(s.local.name);
        }
      },
      MemberExpression(node) {
        if (
          node.object.type === 'Identifier' &&
          modules.has(node.object.name) &&
          !node.computed &&
          YAML_LOADERS.has(node.property.name)
        )
          context.report({ node, message: YAML_LOADER_MESSAGE });
      },
    };
  },
};

/**
 * An error is never read as absence: a catch that turns every error into a default makes a
 * refusal, a permission error or a network fault look like "not there", and a result built on it
 * look complete. In src/, a `catch` clause with no parameter (or one it never reads), and a
 * `.catch(…)` or the rejection handler of `.then(…, …)` whose callback takes none (or never reads
 * it), must say why any error is safe to ignore there: a comment inside the catch block, or on the
 * line of the `.catch(` or the line before. Otherwise catch only the error that means absence.
 */
const SWALLOW_MESSAGE =
  'catch only the error that means "not there" (a file: ENOENT, isNotFound in src/util/fs.ts; a registry: a RegistryError with status 404, isRegistryNotFound in src/mirror/registry/errors.ts) and rethrow the rest with its cause';
const noSilentCatch = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const file = posix(relative(ROOT, context.filename));
    if (!file.startsWith('src/')) return {};
    const source = context.sourceCode;
    /** Whether the parameters a handler declares are all never read (or it declares none). */
    const unread = (node) => source.getDeclaredVariables(node).every((v) => v.references.length === 0);
    const commentOnLines = (lines) => source.getAllComments().some((c) => lines.includes(c.loc.start.line));
    return {
      CatchClause(node) {
        if (node.param && !unread(node)) return;
        if (source.getCommentsInside(node.body).length > 0) return;
        context.report({
          node,
          message: `this catch turns every error into a default: ${SWALLOW_MESSAGE}; or, if any error is safe to ignore here, say why in a comment inside the catch block.`,
        });
      },
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier')
          return;
        const name = callee.property.name;
        const handler =
          name === 'catch' ? node.arguments[0] : name === 'then' ? node.arguments[1] : undefined;
        if (!handler || (handler.type !== 'ArrowFunctionExpression' && handler.type !== 'FunctionExpression'))
          return;
        if (handler.params.length > 0 && !unread(handler)) return;
        const line = callee.property.loc.start.line;
        const at = handler.loc.start.line;
        if (commentOnLines([line, line - 1, at, at - 1]) || source.getCommentsInside(handler).length > 0)
          return;
        context.report({
          node: callee.property,
          message: `this .${name}() turns every error into a default: ${SWALLOW_MESSAGE}; or, if any error is safe to ignore here, say why in a comment on the line of the .${name}( or the line before.`,
        });
      },
    };
  },
};

/**
 * A cast through `unknown` (`x as unknown as T`, `<T><unknown>x`) tells TypeScript to check
 * nothing: in src/, a value from outside (JSON, YAML) is validated by a type guard that names the
 * bad field, and a value whose type is only too wide gets a generic, the library's declared type,
 * or an assertion to a type it overlaps with (`as T`), which TypeScript still checks.
 */
const CAST_MESSAGE =
  'a cast through unknown checks nothing: validate outside input with a type guard (an error naming the field), or use a generic, the declared library type, or a plain `as T` to a type the value overlaps with';
const noCastThroughUnknown = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const file = posix(relative(ROOT, context.filename));
    if (!file.startsWith('src/')) return {};
    const isCast = (node) => node.type === 'TSAsExpression' || node.type === 'TSTypeAssertion';
    const toUnknown = (node) => isCast(node) && node.typeAnnotation.type === 'TSUnknownKeyword';
    const check = (node) => {
      if (!toUnknown(node) && toUnknown(node.expression)) context.report({ node, message: CAST_MESSAGE });
    };
    return { TSAsExpression: check, TSTypeAssertion: check };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', '.work/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: {
      airgap: {
        rules: {
          boundaries,
          'yaml-loader': yamlLoader,
          'no-silent-catch': noSilentCatch,
          'no-cast-through-unknown': noCastThroughUnknown,
        },
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'airgap/boundaries': 'error',
      'airgap/yaml-loader': 'error',
      'airgap/no-silent-catch': 'error',
      'airgap/no-cast-through-unknown': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector:
            ":matches(CallExpression, NewExpression)[callee.name=/^(usageError|AirgapError|RegistryError)$/][arguments.0.type='Literal']",
          message: "Name the error code from its domain's catalog (src/<domain>/errors.ts), not as a string.",
        },
      ],
    },
  },
  {
    // The lab, the benchmarks and the tests are not product code: oclif stays out of them.
    files: ['lab/**', 'bench/**', 'test/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@oclif/core', message: 'oclif belongs in src/commands.' }] },
      ],
    },
  },
);
