/**
 * Hand-written FFM bindings to libibverbs and libmlx5 (jextract is not available): library loading with a clear
 * message when missing, struct offsets checked against the installed headers by {@code AbiTest} through
 * {@link dev.tern.rawqp.ffm.CAbi}, control-plane calls with errno capture, and the inline-only verbs reached through
 * the provider's function pointers ({@link dev.tern.rawqp.ffm.VerbsOps}, {@link dev.tern.rawqp.ffm.Verbs#extendedOp}).
 */
package dev.tern.rawqp.ffm;
