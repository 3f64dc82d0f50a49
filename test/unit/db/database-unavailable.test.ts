import { describe, expect, it } from 'vitest';
import { TransactionDeadlineError } from '../../../src/db/pool.ts';
import { isDatabaseUnavailable } from '../../../src/db/unavailable.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('recognizes a database that cannot be reached, however node-postgres reports it', () => {
    for (const err of [
      withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      withCode('ECONNRESET', 'read ECONNRESET'),
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P03', 'the database system is starting up'),
      withCode('53300', 'sorry, too many clients already'),
      withCode('08006', 'connection failure'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], ''),
      new Error('migration failed', { cause: withCode('57P01') }),
      // A frozen server: a query past the pool's deadline, a transaction past its own, a
      // statement the server ended past statement_timeout.
      new Error('Query read timeout'),
      new TransactionDeadlineError(4_000),
      withCode('57014', 'canceling statement due to statement timeout'),
    ]) {
      expect(isDatabaseUnavailable(err), String((err as Error).message)).toBe(true);
    }
  });

  it('leaves every other failure alone', () => {
    for (const err of [withCode('23505', 'duplicate key value'), withCode('42601', 'syntax error'), withCode('55P03', 'lock timeout'), new Error('boom'), new AggregateError([withCode('ECONNREFUSED'), new Error('other')], ''), undefined, null, 'a string']) {
      expect(isDatabaseUnavailable(err), String(err)).toBe(false);
    }
  });
});
