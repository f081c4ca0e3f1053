/**
 * The Linux ABI constants and struct offsets the AF_PACKET link needs ({@link dev.tern.afpacket.libc.LinuxAbi}),
 * checked against the installed headers by a gcc-compiled test, and {@link dev.tern.afpacket.libc.LibcException} for
 * a failed call of core's libc bindings ({@link dev.tern.core.sys.Libc}).
 */
package dev.tern.afpacket.libc;
