package dev.tern.stack;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Readiness of many Tern sockets at once, like epoll in level-triggered mode: register sockets with the
 * operations of interest, then {@link #select} to be handed each socket that is ready, as often as it stays ready.
 *
 * <p>The stack thread queues a socket when its readiness may have changed (once, however many times it is
 * signalled: a flag per socket dedups), so a select costs the ready sockets, not the registered ones, and nothing
 * is allocated. A socket still ready after its handler ran is kept for the next select (level-triggered).
 *
 * <p>The ready queue is an array of the capacity given; more sockets than that may be registered (a server's selector
 * sized for its usual load that meets more connections), and those queued while the array is full wait in an
 * unbounded overflow queue (a node allocated for each, on that rare path only), so no readiness is ever lost.
 *
 * <p>One thread selects. {@link #wakeup()} from any thread makes a blocked select return. When the selecting thread
 * is the stack's own (a poll-mode application), {@link #select} polls the stack while it waits.
 */
public final class Selector {
    /** Called for each ready socket; {@code readyOps} is the ready subset of its interest. */
    @FunctionalInterface
    public interface Handler {
        void onReady(SelectableSocket socket, int readyOps, Object attachment);
    }

    private final NetStack stack;
    private final ManyToOneConcurrentArrayQueue<SelectableSocket> ready;
    /** Sockets queued while {@link #ready} was full; {@link #overflowed} counts them (the queue's size is a walk). */
    private final ConcurrentLinkedQueue<SelectableSocket> overflow = new ConcurrentLinkedQueue<>();
    private final AtomicInteger overflowed = new AtomicInteger();
    private volatile Thread selecting;
    private volatile boolean wakeupPending;
    private volatile Runnable queuedHook;
    private int registered;

    /**
     * A selector for sockets of {@code stack} whose ready queue holds {@code capacity} sockets without allocating
     * (more may be registered: see the class comment).
     */
    public Selector(NetStack stack, int capacity) {
        this.stack = stack;
        this.ready = new ManyToOneConcurrentArrayQueue<>(capacity);
    }

    public Selector(NetStack stack) {
        this(stack, 65536);
    }

    /** The stack whose sockets this selector watches. */
    public NetStack stack() {
        return stack;
    }

    /** Registers {@code socket} (or changes its interest); a socket belongs to at most one selector. */
    public void register(SelectableSocket socket, int interestOps, Object attachment) {
        if (socket.stack() != stack) {
            throw new IllegalArgumentException("socket belongs to another stack");
        }
        if (socket.selector != null && socket.selector != this) {
            throw new IllegalStateException("socket is registered with another selector");
        }
        if (socket.selector == null) {
            registered++;
        }
        socket.attachment = attachment;
        socket.interestOps = interestOps;
        socket.selector = this;
        socket.signal();
    }

    /** Stops watching {@code socket}. */
    public void deregister(SelectableSocket socket) {
        if (socket.selector == this) {
            socket.selector = null;
            socket.interestOps = 0;
            registered--;
        }
    }

    public int registered() {
        return registered;
    }

    /**
     * Runs {@code hook} each time a socket is queued as ready, on the thread that signalled it (usually the stack's):
     * for a selecting thread that waits on something else besides this selector, such as the {@code nio} module's
     * selector blocked in the kernel's epoll for kernel channels, which the hook wakes. It must be quick and must not
     * block or throw; null removes it.
     */
    public void onQueued(Runnable hook) {
        queuedHook = hook;
    }

    void enqueue(SelectableSocket socket) {
        offerReady(socket);
        final Runnable hook = queuedHook;
        if (hook != null) {
            hook.run();
        }
        final Thread waiting = selecting;
        if (waiting != null && waiting != Thread.currentThread()) { // not the selector polling the stack itself
            LockSupport.unpark(waiting);
        }
    }

    /** Queues a socket whose queued flag this thread set: in the array, or past it when the array is full. */
    private void offerReady(SelectableSocket socket) {
        if (!ready.offer(socket)) {
            overflow.offer(socket);
            overflowed.incrementAndGet();
        }
    }

    private boolean nothingQueued() {
        return ready.isEmpty() && overflowed.get() == 0;
    }

    /**
     * Hands every ready socket to {@code handler} without waiting; returns how many.
     *
     * <p>Invariant: a socket's queued flag is set exactly while it is in the ready queue or being handled here, so
     * the stack enqueues it at most once. After handling, a socket still ready goes back in the queue; one that is
     * not has its flag cleared and its readiness checked once more, because the stack may have signalled (and
     * found the flag set) in between.
     */
    public int selectNow(Handler handler) {
        int handled = 0;
        // Each socket queued when the select began is looked at once: those in the array, then those past it.
        final int inArray = ready.size();
        final int past = overflowed.get();
        for (int n = inArray; n > 0; n--) {
            final SelectableSocket socket = ready.poll();
            if (socket == null) {
                break;
            }
            handled += handle(socket, handler);
        }
        for (int n = past; n > 0; n--) {
            final SelectableSocket socket = overflow.poll();
            if (socket == null) {
                break;
            }
            overflowed.decrementAndGet();
            handled += handle(socket, handler);
        }
        return handled;
    }

    /** One queued socket: its handler if ready, then back in the queue if still ready; returns 1 if handled. */
    private int handle(SelectableSocket socket, Handler handler) {
        if (socket.selector != this) {
            socket.clearQueued();
            return 0;
        }
        final int ops = socket.readyOps() & socket.interestOps;
        if (ops != 0) {
            handler.onReady(socket, ops, socket.attachment);
        }
        if (stillReady(socket)) {
            offerReady(socket);
        } else {
            socket.clearQueued();
            if (stillReady(socket) && socket.tryMarkQueued()) {
                offerReady(socket);
            }
        }
        return ops != 0 ? 1 : 0;
    }

    private boolean stillReady(SelectableSocket socket) {
        return socket.selector == this && (socket.readyOps() & socket.interestOps) != 0;
    }

    /**
     * Waits up to {@code timeoutNs} for ready sockets and hands them to {@code handler}; returns how many (0 on
     * timeout or {@link #wakeup()}).
     */
    public int select(long timeoutNs, Handler handler) {
        final long deadline = System.nanoTime() + timeoutNs;
        final boolean owner = stack.isOwnerThread();
        selecting = Thread.currentThread();
        try {
            while (true) {
                final int handled = selectNow(handler);
                if (handled > 0 || wakeupPending) {
                    wakeupPending = false;
                    return handled;
                }
                final long now = System.nanoTime();
                if (deadline - now <= 0) {
                    return 0;
                }
                if (owner) {
                    if (stack.doWork() == 0) {
                        Thread.onSpinWait();
                    }
                } else if (nothingQueued()) {
                    if (stack.borrow()) {
                        // Between a runner's turns: poll the stack here until a socket is queued or it stays quiet.
                        try {
                            pollUntilQueued(deadline);
                        } finally {
                            stack.giveBack();
                        }
                    }
                    if (nothingQueued() && !wakeupPending) {
                        LockSupport.parkNanos(this, Math.min(deadline - System.nanoTime(), 1_000_000L));
                    }
                }
            }
        } finally {
            selecting = null;
        }
    }

    /** Polls the stack this thread holds until a socket is queued, a wakeup, the deadline or a quiet spell. */
    private void pollUntilQueued(long deadline) {
        for (long lastWorkNs = System.nanoTime(); nothingQueued() && !wakeupPending; ) {
            if ((lastWorkNs = stack.busyPollStep(lastWorkNs, deadline)) == NetStack.STOP_POLLING) {
                return;
            }
        }
    }

    /** Makes a blocked {@link #select} (or the next one) return at once; any thread. */
    public void wakeup() {
        wakeupPending = true;
        final Thread waiting = selecting;
        if (waiting != null) {
            LockSupport.unpark(waiting);
        }
    }
}
