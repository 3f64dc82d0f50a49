import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'clients/*/dist/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', AbortController: 'readonly', performance: 'readonly', setImmediate: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The client address is read one way (src/http/client/client-address.ts): request.clientAddress
    // and request.clientNetwork, never the framework's own readings of X-Forwarded-For.
    files: ['src/**/*.ts', 'src/**/*.tsx', 'projector/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['request', 'req'].flatMap((object) =>
          ['ip', 'ips'].map((property) => ({ object, property, message: 'Read request.clientAddress or request.clientNetwork (src/http/client/client-address.ts).' })),
        ),
      ],
    },
  },
  {
    // The pages' one script runs in browsers.
    files: ['src/web/assets/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { window: 'readonly', document: 'readonly', DOMParser: 'readonly', URL: 'readonly', AbortController: 'readonly', fetch: 'readonly' } },
  },
);
