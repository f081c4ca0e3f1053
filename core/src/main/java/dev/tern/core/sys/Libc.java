package dev.tern.core.sys;

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
 * The libc calls Tern's links (AF_PACKET, AF_XDP) and the namespace helpers make, bound by hand through FFM, once for
 * all of them: each link module adds only its own error type and the calls no other module makes.
 *
 * <p>Every binding captures {@code errno} ({@link Linker.Option#captureCallState}): the caller passes a
 * <em>call-state</em> segment ({@link #newCallState}) as the first argument, and reads {@link #errno} from it only
 * when the call reported failure (-1, or 0 for {@code if_nametoindex}), because errno is left over from an unrelated
 * earlier failure after a successful call. Each link module turns a failure into its own exception naming the call
 * and {@link #errnoName} ("setsockopt(PACKET_RX_RING) failed: EINVAL (22)"). The data-path calls ({@link #sendto},
 * {@link #recvfrom}, {@link #poll}) allocate nothing: the call-state segment is allocated once per link.
 *
 * <p>Stateless and thread-safe; a call-state segment belongs to one thread at a time.
 */
public final class Libc {
    /**
     * {@link #open}'s flags and {@link #setns}'s namespace type, for the namespace harness (testkit), which enters a
     * network namespace with them and has no ABI class of its own; afpacket's {@code LinuxAbi} names them too, so
     * that its test checks them against the headers.
     */
    public static final int O_RDONLY = 0;
    public static final int O_CLOEXEC = 0x80000;
    public static final int CLONE_NEWNET = 0x40000000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LOOKUP = LINKER.defaultLookup();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final MethodHandle SOCKET = errnoCall("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle BIND = errnoCall("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SETSOCKOPT = errnoCall("setsockopt",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle GETSOCKOPT = errnoCall("getsockopt",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle MMAP = errnoCall("mmap",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = errnoCall("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle MADVISE = errnoCall("madvise", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle MINCORE = errnoCall("mincore", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle POLL = errnoCall("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SENDTO = errnoCall("sendto",
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RECVFROM = errnoCall("recvfrom",
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle IF_NAMETOINDEX = errnoCall("if_nametoindex", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int ioctl(int fd, unsigned long request, ...)}: the third argument is variadic (a pointer here). */
    private static final MethodHandle IOCTL = errnoCall("ioctl",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle SETNS = errnoCall("setns", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle CLOSE = errnoCall("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    /** {@code int open(const char *path, int flags, ...)}: called without the variadic mode (no O_CREAT). */
    private static final MethodHandle OPEN = errnoCall("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT),
        Linker.Option.firstVariadicArg(2));
    /**
     * {@link #SENDTO} without errno: the JDK's downcall with a captured call state allocates 40 bytes a call until C2
     * has compiled it (8,000,000 B for 200,000 calls under C1 or the interpreter, none under C2, in a standalone
     * check), and a kick loop that calls it per 32 frames showed that as 1.25 MB per million frames in a test run.
     */
    private static final MethodHandle SENDTO_NO_ERRNO = LINKER.downcallHandle(symbol("sendto"),
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    /** {@link #RECVFROM} without errno (see {@link #SENDTO_NO_ERRNO}). */
    private static final MethodHandle RECVFROM_NO_ERRNO = LINKER.downcallHandle(symbol("recvfrom"),
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle EVENTFD = errnoCall("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    /** {@code write} and {@code read} of an event counter: 8 bytes, outcome judged by the caller, no errno. */
    private static final MethodHandle WRITE_NO_ERRNO = LINKER.downcallHandle(symbol("write"),
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle READ_NO_ERRNO = LINKER.downcallHandle(symbol("read"),
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle GETPAGESIZE = LINKER.downcallHandle(symbol("getpagesize"), FunctionDescriptor.of(JAVA_INT));

    private Libc() {
    }

    private static MemorySegment symbol(String name) {
        return LOOKUP.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no symbol " + name));
    }

    /**
     * A libc function no other module calls, bound as the ones here: errno captured into the call-state segment
     * passed first. For a link module's own calls (AF_XDP's {@code syscall(__NR_bpf, ...)}).
     */
    public static MethodHandle downcall(String name, FunctionDescriptor descriptor, Linker.Option... more) {
        return errnoCall(name, descriptor, more);
    }

    private static MethodHandle errnoCall(String name, FunctionDescriptor descriptor, Linker.Option... more) {
        final Linker.Option[] options = new Linker.Option[more.length + 1];
        options[0] = CAPTURE_ERRNO;
        System.arraycopy(more, 0, options, 1, more.length);
        return LINKER.downcallHandle(symbol(name), descriptor, options);
    }

    /** A segment that receives errno from every call it is passed to; allocate once per owner, reuse. */
    public static MemorySegment newCallState(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    /** errno as captured by the last call given {@code callState}; meaningful only after that call failed. */
    public static int errno(MemorySegment callState) {
        return (int) ERRNO.get(callState, 0L);
    }

    public static int socket(MemorySegment callState, int domain, int type, int protocol) {
        try {
            return (int) SOCKET.invokeExact(callState, domain, type, protocol);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int bind(MemorySegment callState, int fd, MemorySegment address, int addressLength) {
        try {
            return (int) BIND.invokeExact(callState, fd, address, addressLength);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int setsockopt(MemorySegment callState, int fd, int level, int name, MemorySegment value, int length) {
        try {
            return (int) SETSOCKOPT.invokeExact(callState, fd, level, name, value, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code length} points to a {@code socklen_t} holding the buffer size on entry and the value size on return. */
    public static int getsockopt(MemorySegment callState, int fd, int level, int name, MemorySegment value, MemorySegment length) {
        try {
            return (int) GETSOCKOPT.invokeExact(callState, fd, level, name, value, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** Returns the mapping's address, or -1 ({@code MAP_FAILED}). */
    public static long mmap(MemorySegment callState, long length, int protection, int flags, int fd, long offset) {
        try {
            return ((MemorySegment) MMAP.invokeExact(callState, MemorySegment.NULL, length, protection, flags, fd, offset)).address();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int munmap(MemorySegment callState, long address, long length) {
        try {
            return (int) MUNMAP.invokeExact(callState, MemorySegment.ofAddress(address), length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int madvise(MemorySegment callState, long address, long length, int advice) {
        try {
            return (int) MADVISE.invokeExact(callState, MemorySegment.ofAddress(address), length, advice);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** One byte per page of {@code [address, address + length)} into {@code vector}: bit 0 set where resident. */
    public static int mincore(MemorySegment callState, long address, long length, MemorySegment vector) {
        try {
            return (int) MINCORE.invokeExact(callState, MemorySegment.ofAddress(address), length, vector);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code eventfd(initial, flags)}: a counter a poll can wait on and another thread can bump; the fd or -1. */
    public static int eventfd(MemorySegment callState, int initial, int flags) {
        try {
            return (int) EVENTFD.invokeExact(callState, initial, flags);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code write(fd, buffer, length)} without errno: bytes written or -1. No allocation. */
    public static long writeWithoutErrno(int fd, MemorySegment buffer, long length) {
        try {
            return (long) WRITE_NO_ERRNO.invokeExact(fd, buffer, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code read(fd, buffer, length)} without errno: bytes read or -1. No allocation. */
    public static long readWithoutErrno(int fd, MemorySegment buffer, long length) {
        try {
            return (long) READ_NO_ERRNO.invokeExact(fd, buffer, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** Data path: no allocation. */
    public static int poll(MemorySegment callState, MemorySegment pollFds, long count, int timeoutMs) {
        try {
            return (int) POLL.invokeExact(callState, pollFds, count, timeoutMs);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@code sendto(fd, NULL, 0, flags, NULL, 0)}: a transmit ring's "doorbell" (AF_PACKET: send every frame marked
     * {@code TP_STATUS_SEND_REQUEST}; AF_XDP: the TX kick). Data path: no allocation. Returns bytes queued or -1.
     */
    public static long sendto(MemorySegment callState, int fd, int flags) {
        try {
            return (long) SENDTO.invokeExact(callState, fd, MemorySegment.NULL, 0L, flags, MemorySegment.NULL, 0);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@link #sendto} without errno, for a kick repeated in a loop where the caller judges the outcome by the ring's
     * progress and calls {@link #sendto} only to learn why a call made none. Returns bytes queued or -1.
     */
    public static long sendtoWithoutErrno(int fd, int flags) {
        try {
            return (long) SENDTO_NO_ERRNO.invokeExact(fd, MemorySegment.NULL, 0L, flags, MemorySegment.NULL, 0);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code recvfrom(fd, NULL, 0, flags, NULL, NULL)}: a receive wakeup that takes no data (AF_XDP's fill ring). */
    public static long recvfrom(MemorySegment callState, int fd, int flags) {
        try {
            return (long) RECVFROM.invokeExact(callState, fd, MemorySegment.NULL, 0L, flags, MemorySegment.NULL,
                MemorySegment.NULL);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@link #recvfrom} without errno: a wakeup whose outcome the caller does not read. Returns bytes or -1. */
    public static long recvfromWithoutErrno(int fd, int flags) {
        try {
            return (long) RECVFROM_NO_ERRNO.invokeExact(fd, MemorySegment.NULL, 0L, flags, MemorySegment.NULL,
                MemorySegment.NULL);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** Returns the interface index, or 0 when there is none (errno ENODEV). */
    public static int ifNameToIndex(MemorySegment callState, MemorySegment name) {
        try {
            return (int) IF_NAMETOINDEX.invokeExact(callState, name);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int ioctl(MemorySegment callState, int fd, long request, MemorySegment argument) {
        try {
            return (int) IOCTL.invokeExact(callState, fd, request, argument);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** Moves the <em>calling thread</em> into the namespace {@code fd} refers to. */
    public static int setns(MemorySegment callState, int fd, int namespaceType) {
        try {
            return (int) SETNS.invokeExact(callState, fd, namespaceType);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int close(MemorySegment callState, int fd) {
        try {
            return (int) CLOSE.invokeExact(callState, fd);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    public static int open(MemorySegment callState, MemorySegment path, int flags) {
        try {
            return (int) OPEN.invokeExact(callState, path, flags);
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

    /** The symbolic name of an errno value ("EINVAL"), or "errno N" when this table does not know it. */
    public static String errnoName(int errno) {
        return switch (errno) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 3 -> "ESRCH";
            case 4 -> "EINTR";
            case 5 -> "EIO";
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
            case 23 -> "ENFILE";
            case 24 -> "EMFILE";
            case 25 -> "ENOTTY";
            case 28 -> "ENOSPC";
            case 38 -> "ENOSYS";
            case 88 -> "ENOTSOCK";
            case 90 -> "EMSGSIZE";
            case 92 -> "ENOPROTOOPT";
            case 93 -> "EPROTONOSUPPORT";
            case 95 -> "EOPNOTSUPP";
            case 97 -> "EAFNOSUPPORT";
            case 98 -> "EADDRINUSE";
            case 99 -> "EADDRNOTAVAIL";
            case 100 -> "ENETDOWN";
            case 101 -> "ENETUNREACH";
            case 105 -> "ENOBUFS";
            case 110 -> "ETIMEDOUT";
            case 524 -> "ENOTSUPP";
            default -> "errno " + errno;
        };
    }

    private static AssertionError unexpected(Throwable t) {
        // invokeExact on a downcall handle with the exact type throws nothing but a JVM error.
        return new AssertionError("native call failed unexpectedly: " + t, t);
    }
}
