#!/usr/bin/env node
// The `catalog` command. Runs the TypeScript sources through tsx's loader so a fresh
// clone works after `npm install` alone, with no build step.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// The project's tsconfig (JSX settings included) applies whatever the working directory.
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../src/cli.ts');
