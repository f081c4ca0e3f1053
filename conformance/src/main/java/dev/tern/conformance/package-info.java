/**
 * Conformance tooling: replaying recorded captures through a stack ({@link dev.tern.conformance.replay}). The
 * interop tests against the Linux kernel and the fuzz harnesses live in this module's tests.
 */
package dev.tern.conformance;
