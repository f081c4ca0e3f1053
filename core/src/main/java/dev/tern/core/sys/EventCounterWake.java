package dev.tern.core.sys;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Wakes a thread asleep in {@code poll(2)} on a link's socket from any other thread, through an event counter
 * ({@code eventfd(2)}) polled beside the socket: {@link #wake} adds 1 (one {@code write(2)}), the sleeper's poll
 * returns, and {@link #take} reads the counter back to 0. The links that sleep in the kernel (AF_PACKET, AF_XDP) each
 * hold one; a shard handing a frame over, or an application thread queuing work, wakes the stack that owns the link.
 *
 * <p>{@link #shut} waits for a wake in progress and refuses later ones, so that no write reaches the descriptor once
 * the link closes it (or the system hands its number to another file).
 *
 * <p>{@link #awaitBeside} is the owner's sleep: one {@code poll(2)} on the link's socket and this counter. The
 * {@code struct pollfd} layout below is checked against the C headers by afpacket's {@code LinuxAbiTest} and
 * afxdp's {@code XdpAbiTest}: their ABI classes take these values.
 */
public final class EventCounterWake {
    /** {@code sizeof(struct pollfd)}: {@code int fd; short events; short revents;}. */
    public static final int POLLFD_SIZE = 8;
    public static final int POLLFD_FD_OFFSET = 0;
    public static final int POLLFD_EVENTS_OFFSET = 4;
    public static final int POLLFD_REVENTS_OFFSET = 6;
    public static final int POLLIN = 0x1;
    public static final int POLLERR = 0x8;

    /** 1, as a native 8-byte integer: what a wake writes. Never freed. */
    private static final MemorySegment ONE = one();

    private final int eventFd;
    /** Where {@link #take} reads the counter into. */
    private final MemorySegment count;
    /** Keeps a wake from writing to the descriptor once it may be closed. */
    private final ShutGate gate = new ShutGate();

    /** For the event counter {@code eventFd} (made non-blocking by its owner), with scratch memory from {@code arena}. */
    public EventCounterWake(int eventFd, Arena arena) {
        this.eventFd = eventFd;
        this.count = arena.allocate(8, 8);
    }

    /** The descriptor to poll for {@code POLLIN} beside the socket. */
    public int fd() {
        return eventFd;
    }

    /** Any thread: makes the owner's poll return (now, or at its next one). False once shut, or if the write failed. */
    public boolean wake() {
        if (!gate.enter()) {
            return false;
        }
        try {
            return Libc.writeWithoutErrno(eventFd, ONE, 8) == 8;
        } finally {
            gate.exit();
        }
    }

    /** The owner, after its poll saw the counter readable: reads it back to 0, so the wake is taken once. */
    public void take() {
        Libc.readWithoutErrno(eventFd, count, 8);
    }

    /** Memory for {@link #awaitBeside}'s two {@code pollfd}s, from {@code arena}: made once, by the owner. */
    public static MemorySegment pollFds(Arena arena) {
        return arena.allocate(2L * POLLFD_SIZE, 8);
    }

    /**
     * The owner: sleeps in one {@code poll(2)} until {@code socketFd} has one of {@code socketEvents}, a
     * {@link #wake} comes, or {@code timeoutMs} passes, and takes a wake it saw. Returns true when the counter woke
     * it. {@code pollFds} comes from {@link #pollFds}; {@code callState} is the caller's errno capture for
     * {@link Libc#poll}. Allocates nothing of its own (the errno-capturing {@code poll} downcall allocates until C2
     * has compiled it, see {@link Libc}).
     */
    public boolean awaitBeside(MemorySegment callState, MemorySegment pollFds, int socketFd, int socketEvents,
                               int timeoutMs) {
        pollFds.set(ValueLayout.JAVA_INT, POLLFD_FD_OFFSET, socketFd);
        pollFds.set(ValueLayout.JAVA_SHORT, POLLFD_EVENTS_OFFSET, (short) socketEvents);
        pollFds.set(ValueLayout.JAVA_SHORT, POLLFD_REVENTS_OFFSET, (short) 0);
        final long counter = POLLFD_SIZE;
        pollFds.set(ValueLayout.JAVA_INT, counter + POLLFD_FD_OFFSET, eventFd);
        pollFds.set(ValueLayout.JAVA_SHORT, counter + POLLFD_EVENTS_OFFSET, (short) POLLIN);
        pollFds.set(ValueLayout.JAVA_SHORT, counter + POLLFD_REVENTS_OFFSET, (short) 0);
        Libc.poll(callState, pollFds, 2, timeoutMs);
        if ((pollFds.get(ValueLayout.JAVA_SHORT, counter + POLLFD_REVENTS_OFFSET) & POLLIN) == 0) {
            return false;
        }
        take();
        return true;
    }

    /** Waits for a wake in progress to finish and refuses every later one; then the descriptor may be closed. */
    public void shut() {
        gate.shut();
    }

    private static MemorySegment one() {
        final MemorySegment one = Arena.global().allocate(ValueLayout.JAVA_LONG);
        one.set(ValueLayout.JAVA_LONG, 0, 1L);
        return one;
    }
}
