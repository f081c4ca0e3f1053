/**
 * The bottom of Tern: off-heap frame memory and flyweights, the Internet checksum, clocks, timers and counters.
 * Nothing here knows any protocol.
 */
package dev.tern.core;
