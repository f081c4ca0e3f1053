package dev.tern.stack;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * How a stack's thread idles when it serves the network and little else: a poll that did work is followed at once by
 * the next; after {@value #SPINS} idle polls in a row it sleeps in the kernel until its link has a frame, for at most
 * {@value #MAX_WAIT_MS} ms (the timer wheel's tick is about as long, so no timer fires much later than due). Waiting
 * in {@code poll(2)} makes the thread a sleeper that a frame wakes at once: on a machine whose cores are all busy, a
 * thread that spins or parks for microseconds is runnable most of the time and waits its turn behind everything
 * else ({@code tern serve --http} answered a request 0.3-3 ms after it arrived that way with ab and the kernel sharing
 * two cores). A link that cannot wait ({@link dev.tern.ethernet.link.Link#canAwaitFrames()} false: the memory wire)
 * falls back to Agrona's backoff: spin, yield, park up to 100 µs.
 *
 * <p>An application thread that hands the stack work (a socket's write or read from another thread, a control call)
 * wakes the sleep at once where the link can be woken (AF_PACKET and AF_XDP: an event counter beside the socket), else it is
 * seen at the next poll, within 1 ms ({@link NetStack#awaitWork}). Owned by the stack's thread.
 */
public final class LinkIdleStrategy implements IdleStrategy {
    static final int SPINS = 200;
    static final int MAX_WAIT_MS = 1;

    private final NetStack stack;
    private final IdleStrategy fallback = new BackoffIdleStrategy(SPINS, 10, 1_000, 100_000);
    private final boolean linkWaits;
    private int idlePolls;

    public LinkIdleStrategy(NetStack stack) {
        this.stack = stack;
        this.linkWaits = stack.link().canAwaitFrames();
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        if (!linkWaits) {
            fallback.idle();
            return;
        }
        if (++idlePolls < SPINS) {
            Thread.onSpinWait();
            return;
        }
        stack.awaitWork(MAX_WAIT_MS);
    }

    @Override
    public void reset() {
        idlePolls = 0;
        fallback.reset();
    }

    @Override
    public String alias() {
        return "link-wait";
    }
}
