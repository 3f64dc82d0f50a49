/**
 * Keeps the shape of Node's `process.nextTick` entries alive for the life of the process.
 *
 * Node makes each entry with one object literal (`{ [async_id]: …, [trigger_id]: …, callback,
 * args }`). V8 gives every such object the same chain of hidden classes, one per property added,
 * but the links of that chain are weak: when a full garbage collection finds no entry alive (the
 * queue is empty between two turns of the event loop), the chain is collected and the next entry
 * gets a new one. The stores in Node's literal then meet a new class each time; after four they
 * turn megamorphic for good, and every `nextTick` takes V8's generic path (0.6–1 µs instead of
 * well under 0.1 µs on a 2-core machine). A service that reads a large catalog at start runs many
 * full collections between bursts of `nextTick` (streams, sockets), so it reaches that state
 * before its first request, and an HTTP answer makes about eight ticks. Node 20, 22, 24 and 26
 * behave alike.
 *
 * Holding one entry keeps its class, and through the class's back links the whole chain, alive,
 * so the stores stay monomorphic. One entry is enough for good: an async id outside the
 * small-integer range (after 2^31 asynchronous operations) widens the field in place, with the
 * same classes (test/unit/util/tick-shape.test.ts checks both).
 */
import { executionAsyncResource } from 'node:async_hooks';

let held: object | undefined;

/**
 * Starts holding a `process.nextTick` entry (idempotent). Call it first thing in a process that
 * will serve for a long time, before garbage collections run.
 */
export function keepTickObjectShape(): void {
  if (held) return;
  // Inside a nextTick callback the running async resource is the tick entry itself.
  process.nextTick(() => {
    held ??= executionAsyncResource();
  });
}
