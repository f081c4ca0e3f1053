/** Hand-written FFM bindings for AF_XDP sockets and the bpf() system call, checked against the kernel headers. */
package dev.tern.afxdp.sys;
