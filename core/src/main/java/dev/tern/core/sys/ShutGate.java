package dev.tern.core.sys;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lets any thread use a resource until its owner shuts it, and the owner free it only once no one is using it: for
 * memory or a descriptor that other threads reach without a lock (an event counter a waker writes, counters that
 * application threads add to), which must not be written after it is unmapped or closed.
 *
 * <pre>
 *   if (gate.enter()) { try { use(); } finally { gate.exit(); } }     any thread
 *   gate.shut(); free();                                                 the owner, once
 * </pre>
 */
public final class ShutGate {
    /** Threads inside now; {@code Integer.MIN_VALUE} (and above) once shut. */
    private final AtomicInteger inside = new AtomicInteger();

    /** True when the caller may use the resource (and must {@link #exit} after); false once shut. */
    public boolean enter() {
        if (inside.getAndIncrement() < 0) {
            inside.getAndDecrement();
            return false;
        }
        return true;
    }

    public void exit() {
        inside.getAndDecrement();
    }

    /** Waits for the threads inside to leave and refuses every later {@link #enter}; then the resource may go. */
    public void shut() {
        while (!inside.compareAndSet(0, Integer.MIN_VALUE)) {
            if (inside.get() < 0) {
                return; // shut already
            }
            Thread.onSpinWait(); // a user is inside: let it finish first
        }
    }
}
