package dev.tern.afxdp.sys;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The libc calls the AF_XDP link makes, bound by hand through FFM, each capturing {@code errno}.
 *
 * <p>The caller passes a call-state segment ({@link #newCallState}) first and reads {@link #errno} from it only after
 * a call reported failure. The data-path calls ({@link #sendto}, {@link #recvfrom}, {@link #poll}) allocate nothing.
 * Control-plane failures become {@link SysException}s naming the call ({@link #check}).
 *
 * <p>afxdp does not share afpacket's bindings: the two are sibling modules on the ladder, neither may use the other.
 *
 * <p>Stateless and thread-safe; a call-state segment belongs to one thread at a time.
 */
public final class Sys {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LOOKUP = LINKER.defaultLookup();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final MethodHandle SOCKET = call("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle BIND = call("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SETSOCKOPT = call("setsockopt",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle GETSOCKOPT = call("getsockopt",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle MMAP = call("mmap",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = call("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle POLL = call("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SENDTO = call("sendto",
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RECVFROM = call("recvfrom",
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle IF_NAMETOINDEX = call("if_nametoindex", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle IOCTL = call("ioctl",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle CLOSE = call("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    /** {@code long syscall(long number, ...)} used as {@code syscall(__NR_bpf, int cmd, union bpf_attr *attr, unsigned size)}. */
    private static final MethodHandle SYSCALL_BPF = call("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.firstVariadicArg(1));
    private static final MethodHandle GETPAGESIZE = LINKER.downcallHandle(
        LOOKUP.find("getpagesize").orElseThrow(), FunctionDescriptor.of(JAVA_INT));

    private Sys() {
    }

    private static MethodHandle call(String name, FunctionDescriptor descriptor, Linker.Option... more) {
        final Linker.Option[] options = new Linker.Option[more.length + 1];
        options[0] = CAPTURE_ERRNO;
        System.arraycopy(more, 0, options, 1, more.length);
        final MemorySegment symbol = LOOKUP.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no symbol " + name));
        return LINKER.downcallHandle(symbol, descriptor, options);
    }

    public static MemorySegment newCallState(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    public static int errno(MemorySegment callState) {
        return (int) ERRNO.get(callState, 0L);
    }

    /** Returns {@code rc}, or throws {@link SysException} naming {@code call} when {@code rc} is negative. */
    public static int check(String call, int rc, MemorySegment callState) {
        if (rc < 0) {
            throw new SysException(call, errno(callState));
        }
        return rc;
    }

    public static int socket(MemorySegment cs, int domain, int type, int protocol) {
        try {
            return (int) SOCKET.invokeExact(cs, domain, type, protocol);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int bind(MemorySegment cs, int fd, MemorySegment address, int length) {
        try {
            return (int) BIND.invokeExact(cs, fd, address, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int setsockopt(MemorySegment cs, int fd, int level, int name, MemorySegment value, int length) {
        try {
            return (int) SETSOCKOPT.invokeExact(cs, fd, level, name, value, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code length} points to a {@code socklen_t}: the buffer size on entry, the value's size on return. */
    public static int getsockopt(MemorySegment cs, int fd, int level, int name, MemorySegment value, MemorySegment length) {
        try {
            return (int) GETSOCKOPT.invokeExact(cs, fd, level, name, value, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** Returns the mapping's address, or -1 ({@code MAP_FAILED}). */
    public static long mmap(MemorySegment cs, long length, int protection, int flags, int fd, long offset) {
        try {
            return ((MemorySegment) MMAP.invokeExact(cs, MemorySegment.NULL, length, protection, flags, fd, offset)).address();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int munmap(MemorySegment cs, long address, long length) {
        try {
            return (int) MUNMAP.invokeExact(cs, MemorySegment.ofAddress(address), length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int poll(MemorySegment cs, MemorySegment pollFds, long count, int timeoutMs) {
        try {
            return (int) POLL.invokeExact(cs, pollFds, count, timeoutMs);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code sendto(fd, NULL, 0, flags, NULL, 0)}: the AF_XDP transmit kick. Returns 0 or -1. */
    public static long sendto(MemorySegment cs, int fd, int flags) {
        try {
            return (long) SENDTO.invokeExact(cs, fd, MemorySegment.NULL, 0L, flags, MemorySegment.NULL, 0);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code recvfrom(fd, NULL, 0, flags, NULL, NULL)}: the AF_XDP fill-ring wakeup. */
    public static long recvfrom(MemorySegment cs, int fd, int flags) {
        try {
            return (long) RECVFROM.invokeExact(cs, fd, MemorySegment.NULL, 0L, flags, MemorySegment.NULL, MemorySegment.NULL);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int ifNameToIndex(MemorySegment cs, MemorySegment name) {
        try {
            return (int) IF_NAMETOINDEX.invokeExact(cs, name);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int ioctl(MemorySegment cs, int fd, long request, MemorySegment argument) {
        try {
            return (int) IOCTL.invokeExact(cs, fd, request, argument);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int close(MemorySegment cs, int fd) {
        try {
            return (int) CLOSE.invokeExact(cs, fd);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code bpf(cmd, attr, size)}; returns a file descriptor or 0 on success, -1 with errno on failure. */
    public static int bpf(MemorySegment cs, int command, MemorySegment attr, int size) {
        try {
            return (int) (long) SYSCALL_BPF.invokeExact(cs, XdpAbi.SYS_BPF, command, attr, size);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int pageSize() {
        try {
            return (int) GETPAGESIZE.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static String errnoName(int errno) {
        return switch (errno) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 4 -> "EINTR";
            case 6 -> "ENXIO";
            case 9 -> "EBADF";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 14 -> "EFAULT";
            case 16 -> "EBUSY";
            case 17 -> "EEXIST";
            case 19 -> "ENODEV";
            case 22 -> "EINVAL";
            case 28 -> "ENOSPC";
            case 38 -> "ENOSYS";
            case 90 -> "EMSGSIZE";
            case 92 -> "ENOPROTOOPT";
            case 95 -> "EOPNOTSUPP";
            case 97 -> "EAFNOSUPPORT";
            case 100 -> "ENETDOWN";
            case 105 -> "ENOBUFS";
            case 524 -> "ENOTSUPP";
            default -> "errno " + errno;
        };
    }

    private static AssertionError unexpected(Throwable t) {
        return new AssertionError("native call failed unexpectedly: " + t, t);
    }
}
