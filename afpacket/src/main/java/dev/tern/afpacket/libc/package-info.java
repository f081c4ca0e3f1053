/**
 * Hand-written FFM bindings to libc ({@link dev.tern.afpacket.libc.Libc}) with errno capture, and the Linux ABI
 * constants and struct offsets they need ({@link dev.tern.afpacket.libc.LinuxAbi}), checked against the installed
 * headers by a gcc-compiled test.
 */
package dev.tern.afpacket.libc;
