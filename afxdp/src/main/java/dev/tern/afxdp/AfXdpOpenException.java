package dev.tern.afxdp;

import dev.tern.afxdp.sys.SysException;
import dev.tern.core.sys.Libc;

/**
 * Why an AF_XDP link could not open, in one line that names the other links ("... use --link afpacket:IFACE or
 * --link memory") where the cause is the machine (kernel, privilege, driver) rather than a typo.
 */
public final class AfXdpOpenException extends RuntimeException {
    static final String OTHER_LINKS = "; --link afpacket:IFACE or --link memory work without AF_XDP";

    /** The errno of the system call that failed, or 0 when the reason is not one. */
    private final int errno;

    public AfXdpOpenException(String message) {
        this(message, 0);
    }

    AfXdpOpenException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    AfXdpOpenException(String message, Throwable cause) {
        super(message, cause);
        this.errno = cause instanceof SysException e ? e.errno() : 0;
    }

    /** The errno of the failed system call behind this, or 0 when there was none. */
    public int errno() {
        return errno;
    }

    static AfXdpOpenException noSuchInterface(String name) {
        return new AfXdpOpenException("afxdp: no interface named '" + name + "' in this network namespace");
    }

    static AfXdpOpenException interfaceDown(String name) {
        return new AfXdpOpenException("afxdp: interface " + name + " is down (ip link set " + name + " up)");
    }

    /** A failed socket, setsockopt, mmap or bind, with the cause in words where errno says it. */
    static AfXdpOpenException failed(String name, SysException e) {
        final String why = switch (e.errno()) {
            case 1, 13 -> "no privilege (AF_XDP needs CAP_NET_ADMIN and CAP_NET_RAW; run as root)" + OTHER_LINKS;
            case 97 -> "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)" + OTHER_LINKS;
            case 12 -> e.call() + ": the kernel refused the memory (ENOMEM: raise RLIMIT_MEMLOCK or use fewer frames)";
            case 16 -> e.call() + ": the queue already has an AF_XDP socket (another Tern on it?) (EBUSY)";
            default -> e.getMessage();
        };
        return new AfXdpOpenException("afxdp:" + name + ": " + why, e);
    }

    static AfXdpOpenException bpf(String call, int errno) {
        final String why = switch (errno) {
            case 1, 13 -> "no privilege to load XDP programs (needs CAP_BPF and CAP_NET_ADMIN; run as root)" + OTHER_LINKS;
            case 38 -> "this kernel has no bpf() system call" + OTHER_LINKS;
            default -> call + " failed: " + Libc.errnoName(errno) + " (" + errno + ")";
        };
        return new AfXdpOpenException("afxdp: " + why, errno);
    }

    static AfXdpOpenException attach(String name, int errno) {
        final String why = switch (errno) {
            case 16, 17 -> "another XDP program is attached to " + name + " (see ip link show " + name
                + "; ip link set dev " + name + " xdp off removes it)";
            case 1, 13 -> "no privilege to attach an XDP program to " + name + " (run as root)" + OTHER_LINKS;
            case 95, 524, 22 -> "the driver of " + name + " takes no XDP program in native or generic mode ("
                + Libc.errnoName(errno) + ")" + OTHER_LINKS;
            default -> "attaching the XDP program to " + name + " failed: " + Libc.errnoName(errno) + " (" + errno + ")";
        };
        return new AfXdpOpenException("afxdp: " + why, errno);
    }
}
