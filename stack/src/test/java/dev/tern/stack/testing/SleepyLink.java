package dev.tern.stack.testing;

import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A link that sleeps in {@code awaitFrames} until woken ({@code wakeAwaitingThread}) or timed out, as AF_PACKET's
 * poll(2) on its socket and event counter does, and counts the wakes: for tests of who wakes a sleeping stack.
 */
public final class SleepyLink extends ForwardingLink {
    private final Semaphore wake = new Semaphore(0);
    /** True while a thread sleeps in {@link #awaitFrames}. */
    public volatile boolean sleeping;
    /** How many times {@link #wakeAwaitingThread} was called. */
    public volatile int wakes;

    public SleepyLink(Link link) {
        super(link);
    }

    @Override
    public boolean canAwaitFrames() {
        return true;
    }

    @Override
    public boolean awaitFrames(int timeoutMs) {
        sleeping = true;
        try {
            wake.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            sleeping = false;
        }
        return false;
    }

    @Override
    public boolean wakeAwaitingThread() {
        wakes++;
        wake.release();
        return true;
    }
}
