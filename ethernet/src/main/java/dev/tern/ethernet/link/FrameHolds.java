package dev.tern.ethernet.link;

import dev.tern.core.counters.CountersFile;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Held-frame zero-copy receive: received payload kept in the link's frame after the receive call, until the
 * application gives it back, as XLIO's held receive buffers are. TCP and UDP make each in-place offer to a receive
 * handler between {@link #beginOffer} and {@link #endOffer}; from inside, the handler may {@link #holdOffer} it; the
 * link lends the frame ({@link Link#lendFrame}); the application may read the view from
 * any thread until it calls {@link #release} (any thread, once). The release is queued to the stack's thread, which
 * at its next poll ({@link #drainReleased}) returns the frame to the link and tells the hold's owner, so that TCP
 * reopens the window the held bytes kept closed.
 *
 * <p>A hold is a {@code long}: a slot of this table in the low 32 bits and the slot's generation in the high ones, so
 * a second release of the same hold, or a release of a hold whose slot was reused since, is refused (false) instead
 * of returning someone else's frame.
 *
 * <pre>
 *   stack thread                     any thread                      stack thread, next poll
 *   hold: lend frame, slot HELD  --> release: CAS HELD -> RELEASED,  --> drainReleased: link.returnFrame(lease),
 *                                    slot + 1 into the release queue     owner.onHoldReleased, slot FREE
 * </pre>
 *
 * <p>The release queue is a multi-producer, single-consumer array of slots: a slot is queued at most once between its
 * hold and its drain, so the array, as long as the table, never overflows. Nothing allocates.
 */
public final class FrameHolds {
    /** Told on the stack's thread when the application released a hold it made. */
    @FunctionalInterface
    public interface Owner {
        /** {@code bytes} held for {@code ownerId} (a connection's handle, a socket) are back. */
        void onHoldReleased(int ownerId, int bytes, long nowNs);
    }

    private static final int FREE = 0;
    private static final int HELD = 1;
    private static final int RELEASED = 2;
    private static final VarHandle STATE = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle QUEUE = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle TAIL;

    static {
        try {
            TAIL = MethodHandles.lookup().findVarHandle(FrameHolds.class, "tail", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Link link;
    private final int[] state;
    private final int[] generation;
    private final int[] lease;
    private final int[] bytes;
    private final int[] ownerId;
    private final Owner[] owner;
    private final int[] freeSlots;
    private int freeCount;
    private final int[] queue;
    private final int mask;
    private long head;
    @SuppressWarnings("unused") // through TAIL
    private volatile long tail;
    private volatile Runnable waker;
    /** The offer being made in place to a receive handler, for {@link #holdOffer}: one at a time, on the stack's thread. */
    private Owner offerOwner;
    private int offerOwnerId;
    private MemorySegment offerSegment;
    private long offerOffset;
    private int offerBytes;
    private boolean offerHeld;
    private final AtomicCounter held;
    private final AtomicCounter returned;
    private final AtomicCounter refused;
    private final AtomicCounter heldNow;

    /** A table of {@code capacity} holds over {@code link}'s frames. */
    public FrameHolds(Link link, int capacity, CountersFile counters) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("frame holds need a capacity above 0, got " + capacity);
        }
        this.link = link;
        this.state = new int[capacity];
        this.generation = new int[capacity];
        this.lease = new int[capacity];
        this.bytes = new int[capacity];
        this.ownerId = new int[capacity];
        this.owner = new Owner[capacity];
        this.freeSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeSlots[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
        final int queueLength = Integer.highestOneBit(capacity - 1 | 1) << 1;
        this.queue = new int[queueLength];
        this.mask = queueLength - 1;
        this.held = counters.counter("ethernet.rx.held_frames");
        this.returned = counters.counter("ethernet.rx.held_returned");
        this.refused = counters.counter("ethernet.rx.hold_refused");
        this.heldNow = counters.counter("ethernet.rx.held_now");
    }

    /** Called after a release is queued (any thread): wakes the stack's thread if it sleeps. Set once, cold path. */
    public void waker(Runnable waker) {
        this.waker = waker;
    }

    /** The most frames a link lends at once out of {@code receiveBuffers}: a quarter, so that it still receives. */
    public static int lendLimit(int receiveBuffers) {
        return Math.max(1, receiveBuffers / 4);
    }

    /**
     * Stack thread: {@code bytes} at {@code offset} of {@code segment}, in a link's frame, are being offered to the
     * receive handler of {@code owner}'s {@code ownerId} (a connection, a socket); until {@link #endOffer} the handler
     * may {@link #holdOffer} them.
     */
    public void beginOffer(Owner owner, int ownerId, MemorySegment segment, long offset, int bytes) {
        offerOwner = owner;
        offerOwnerId = ownerId;
        offerSegment = segment;
        offerOffset = offset;
        offerBytes = bytes;
        offerHeld = false;
    }

    /** Stack thread: the handler returned; whether it held the offer. */
    public boolean endOffer() {
        offerOwner = null;
        offerSegment = null;
        return offerHeld;
    }

    /**
     * From inside the receive handler of {@code owner}'s {@code ownerId}: holds what it is being offered, once. Returns
     * the hold, or -1 where no offer is being made to it, the offer is held already, or {@link #hold} refuses.
     */
    public long holdOffer(Owner owner, int ownerId) {
        if (owner != offerOwner || ownerId != offerOwnerId || offerHeld) {
            return -1;
        }
        final long hold = hold(offerSegment, offerOffset, owner, ownerId, offerBytes);
        offerHeld = hold >= 0;
        return hold;
    }

    /**
     * Stack thread, inside a receive handler: keeps the frame holding {@code segment} at {@code offset} for
     * {@code owner}, on behalf of {@code ownerId}, counting {@code heldBytes} of payload. Returns the hold, or -1 when
     * the link will not lend the frame or the table is full (counted as {@code ethernet.rx.hold_refused}).
     */
    public long hold(MemorySegment segment, long offset, Owner owner, int ownerId, int heldBytes) {
        if (freeCount == 0) {
            refused.incrementRelease();
            return -1;
        }
        final int frameLease = link.lendFrame(segment, offset);
        if (frameLease < 0) {
            refused.incrementRelease();
            return -1;
        }
        final int slot = freeSlots[--freeCount];
        final int gen = generation[slot] + 1;
        generation[slot] = gen;
        lease[slot] = frameLease;
        bytes[slot] = heldBytes;
        this.ownerId[slot] = ownerId;
        this.owner[slot] = owner;
        STATE.setRelease(state, slot, HELD);
        held.incrementRelease();
        heldNow.incrementRelease();
        return ((long) gen << 32) | slot;
    }

    /**
     * Any thread: gives a hold back. Its view must not be read after this. Returns false, changing nothing, for a
     * hold that is not live (released already, or never made).
     */
    public boolean release(long hold) {
        final int slot = (int) hold;
        if (hold < 0 || slot < 0 || slot >= state.length) {
            return false;
        }
        if ((int) STATE.getAcquire(state, slot) != HELD || generation[slot] != (int) (hold >>> 32)
            || !STATE.compareAndSet(state, slot, HELD, RELEASED)) {
            return false;
        }
        final long at = (long) TAIL.getAndAdd(this, 1L);
        QUEUE.setRelease(queue, (int) (at & mask), slot + 1);
        final Runnable wake = waker;
        if (wake != null) {
            wake.run();
        }
        return true;
    }

    /** True when a release waits for {@link #drainReleased}; any thread. */
    public boolean hasReleases() {
        return (long) TAIL.getVolatile(this) != head;
    }

    /**
     * Stack thread: returns released frames to the link and tells their owners; returns how many. Called once per
     * poll, before receiving.
     */
    public int drainReleased(long nowNs) {
        int count = 0;
        int entry;
        while ((entry = (int) QUEUE.getAcquire(queue, (int) (head & mask))) != 0) {
            QUEUE.setRelease(queue, (int) (head & mask), 0);
            head++;
            final int slot = entry - 1;
            link.returnFrame(lease[slot]);
            final Owner slotOwner = owner[slot];
            owner[slot] = null;
            if (slotOwner != null) {
                slotOwner.onHoldReleased(ownerId[slot], bytes[slot], nowNs);
            }
            STATE.setRelease(state, slot, FREE);
            freeSlots[freeCount++] = slot;
            count++;
        }
        if (count > 0) {
            returned.getAndAddRelease(count);
            heldNow.getAndAddRelease(-count);
        }
        return count;
    }

    /** Holds made and not yet drained back (stack thread). */
    public int active() {
        return state.length - freeCount;
    }
}
