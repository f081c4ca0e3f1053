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
 */
public final class EventCounterWake {
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
