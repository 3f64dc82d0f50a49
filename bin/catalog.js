#!/usr/bin/env node
// The `catalog` command. Runs the TypeScript sources through tsx's loader so a fresh
// clone works after `npm install` alone, with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
