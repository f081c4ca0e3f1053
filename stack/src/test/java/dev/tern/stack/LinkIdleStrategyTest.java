package dev.tern.stack;

import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.stack.sim.Simulation;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link LinkIdleStrategy}: spin, then wait on the link; a link that cannot wait is never asked to. */
class LinkIdleStrategyTest {
    /** A link that says it can wait and counts the waits it was asked for (returning at once). */
    static final class WaitingLink extends ForwardingLink {
        int waits;
        int lastTimeoutMs;
        final boolean canWait;

        WaitingLink(dev.tern.ethernet.link.Link link, boolean canWait) {
            super(link);
            this.canWait = canWait;
        }

        @Override
        public boolean canAwaitFrames() {
            return canWait;
        }

        @Override
        public boolean awaitFrames(int timeoutMs) {
            waits++;
            lastTimeoutMs = timeoutMs;
            return false;
        }
    }

    private static WaitingLink link;

    @Test
    void waitsOnTheLinkAfterTheSpinsAndStartsOverAfterWork() {
        try (Simulation sim = new Simulation()) {
            final NetStack stack = sim.addStack("us", "198.18.0.2/24", wire -> link = new WaitingLink(wire, true), b -> { });
            final LinkIdleStrategy idle = new LinkIdleStrategy(stack);
            for (int i = 0; i < LinkIdleStrategy.SPINS - 1; i++) {
                idle.idle(0);
            }
            assertEquals(0, link.waits, "spinning first");
            idle.idle(0);
            idle.idle(0);
            assertEquals(2, link.waits);
            assertEquals(LinkIdleStrategy.MAX_WAIT_MS, link.lastTimeoutMs);
            idle.idle(1);
            for (int i = 0; i < LinkIdleStrategy.SPINS - 1; i++) {
                idle.idle(0);
            }
            assertEquals(2, link.waits, "work starts the spins over");
        }
    }

    @Test
    void aLinkThatCannotWaitIsNeverAskedTo() {
        try (Simulation sim = new Simulation()) {
            final NetStack stack = sim.addStack("us", "198.18.0.2/24", wire -> link = new WaitingLink(wire, false), b -> { });
            final LinkIdleStrategy idle = new LinkIdleStrategy(stack);
            for (int i = 0; i < 3 * LinkIdleStrategy.SPINS; i++) {
                idle.idle(0);
            }
            assertEquals(0, link.waits);
        }
    }
}
