package dev.tern.stack;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * What every Tern socket shares: level-triggered readiness ({@link #readyOps()}), registration with one
 * {@link Selector}, and waking a thread blocked on the socket. The stack thread calls {@link #signal()} when
 * readiness may have changed; signalling is cheap and allocation-free (a flag, a queue slot, an unpark).
 */
public abstract class SelectableSocket {
    /**
     * Readiness bits, as epoll's: data, the end of the stream or a connection to take; room to write; an error
     * pending; a hang-up (as POLLHUP: the connection carries nothing more in either direction).
     */
    public static final int READ = 1;
    public static final int WRITE = 1 << 1;
    public static final int ERROR = 1 << 2;
    public static final int HANGUP = 1 << 3;

    private static final VarHandle QUEUED;
    private static final VarHandle WAITER;
    private static final VarHandle STOP_WAITING;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            QUEUED = lookup.findVarHandle(SelectableSocket.class, "queued", int.class);
            WAITER = lookup.findVarHandle(SelectableSocket.class, "waiter", Thread.class);
            STOP_WAITING = lookup.findVarHandle(SelectableSocket.class, "stopWaiting", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    protected final NetStack stack;
    volatile Selector selector;
    volatile int interestOps;
    volatile Object attachment;
    @SuppressWarnings("unused") // through QUEUED
    private volatile int queued;
    @SuppressWarnings("unused") // through WAITER
    private volatile Thread waiter;
    @SuppressWarnings("unused") // through STOP_WAITING
    private volatile int stopWaiting;

    protected SelectableSocket(NetStack stack) {
        this.stack = stack;
    }

    public NetStack stack() {
        return stack;
    }

    /** Current readiness, a set of {@link #READ}, {@link #WRITE}, {@link #ERROR}, {@link #HANGUP}; any thread. */
    public abstract int readyOps();

    public Object attachment() {
        return attachment;
    }

    /** Readiness may have changed: queue the socket on its selector and wake a thread blocked on it. */
    protected final void signal() {
        final Selector current = selector;
        if (current != null && tryMarkQueued()) {
            current.enqueue(this);
        }
        final Thread blocked = (Thread) WAITER.getAcquire(this);
        if (blocked != null && blocked != Thread.currentThread()) { // not the waiter polling the stack itself
            LockSupport.unpark(blocked);
        }
    }

    boolean clearQueued() {
        return QUEUED.compareAndSet(this, 1, 0);
    }

    boolean tryMarkQueued() {
        return QUEUED.compareAndSet(this, 0, 1);
    }

    /**
     * Waits until {@code ops} is ready or {@code deadlineNs} passes; returns the ready ops (0 on timeout). On the
     * stack's own thread it polls the stack while waiting. On a runner-driven stack it takes the stack between the
     * runner's turns and polls it itself until the socket is ready or nothing happened for
     * {@value NetStack#BUSY_POLL_NS} ns, then gives it back and parks until the stack signals (or 1 ms passes).
     */
    protected final int await(int ops, long deadlineNs) {
        return await(ops, deadlineNs, false);
    }

    /**
     * Waits as {@link #await} does, for code outside this package that blocks on the socket (the {@code nio}
     * module's channels in blocking mode): returns the ready subset of {@code ops | ERROR | HANGUP}, or 0 when
     * {@code deadlineNs} passes, when the calling thread is interrupted, or after {@link #stopWaiting()}. A channel
     * closed by another thread, or whose blocked thread is interrupted, must give up its wait at once
     * ({@code AbstractInterruptibleChannel}); the package's own blocking calls keep waiting until their deadline.
     */
    public final int awaitReady(int ops, long deadlineNs) {
        return await(ops, deadlineNs, true);
    }

    /**
     * Makes a thread in {@link #awaitReady} on this socket return 0 now, and every later {@code awaitReady} return
     * 0 at once: for closing a channel while another thread waits on it. Any thread.
     */
    public final void stopWaiting() {
        STOP_WAITING.setRelease(this, 1);
        final Thread blocked = (Thread) WAITER.getAcquire(this);
        if (blocked != null) {
            LockSupport.unpark(blocked);
        }
    }

    private boolean giveUp(boolean interruptible) {
        return interruptible && ((int) STOP_WAITING.getAcquire(this) != 0 || Thread.currentThread().isInterrupted());
    }

    private int await(int ops, long deadlineNs, boolean interruptible) {
        final int wanted = ops | ERROR | HANGUP;
        int ready = readyOps() & wanted;
        if (ready != 0) {
            return ready;
        }
        final boolean owner = stack.isOwnerThread();
        WAITER.setRelease(this, Thread.currentThread());
        try {
            while ((ready = readyOps() & wanted) == 0) {
                final long now = System.nanoTime();
                if (deadlineNs - now <= 0 || giveUp(interruptible)) {
                    return 0;
                }
                if (owner) {
                    if (stack.doWork() == 0) {
                        Thread.onSpinWait();
                    }
                } else if (stack.borrow()) {
                    try {
                        ready = pollUntilReady(wanted, deadlineNs, interruptible);
                    } finally {
                        stack.giveBack();
                    }
                    if (ready != 0) {
                        return ready;
                    }
                    LockSupport.parkNanos(this, Math.min(deadlineNs - System.nanoTime(), 1_000_000L));
                } else {
                    LockSupport.parkNanos(this, Math.min(deadlineNs - now, 1_000_000L));
                }
            }
            return ready;
        } finally {
            WAITER.setRelease(this, null);
        }
    }

    /**
     * Waits until {@code ops} is ready on any of {@code sockets} (of one stack or several, such as a listener's on
     * every shard) or {@code deadlineNs} passes; returns the index of a ready socket, or -1 on timeout, when the
     * calling thread is interrupted, or after {@link #stopWaiting()} on any of them. It parks until a socket signals
     * (or 1 ms passes) and never polls a stack itself: the stacks' runners drive them. One thread at a time per
     * socket, as {@link #awaitReady}.
     */
    public static int awaitAny(SelectableSocket[] sockets, int ops, long deadlineNs) {
        final int wanted = ops | ERROR | HANGUP;
        final Thread current = Thread.currentThread();
        for (SelectableSocket socket : sockets) {
            WAITER.setRelease(socket, current);
        }
        try {
            while (true) {
                for (int i = 0; i < sockets.length; i++) {
                    if ((sockets[i].readyOps() & wanted) != 0) {
                        return i;
                    }
                }
                final long remaining = deadlineNs - System.nanoTime();
                if (remaining <= 0 || current.isInterrupted()) {
                    return -1;
                }
                for (SelectableSocket socket : sockets) {
                    if ((int) STOP_WAITING.getAcquire(socket) != 0) {
                        return -1;
                    }
                }
                LockSupport.parkNanos(sockets, Math.min(remaining, 1_000_000L));
            }
        } finally {
            for (SelectableSocket socket : sockets) {
                WAITER.setRelease(socket, null);
            }
        }
    }

    /** Polls the stack this thread holds until {@code wanted} is ready (returned), the deadline, or a quiet spell (0). */
    private int pollUntilReady(int wanted, long deadlineNs, boolean interruptible) {
        int ready;
        for (long lastWorkNs = System.nanoTime(); (ready = readyOps() & wanted) == 0; ) {
            if (giveUp(interruptible)
                || (lastWorkNs = stack.busyPollStep(lastWorkNs, deadlineNs)) == NetStack.STOP_POLLING) {
                return 0;
            }
        }
        return ready;
    }
}
