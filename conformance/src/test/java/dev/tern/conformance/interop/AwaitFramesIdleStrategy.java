package dev.tern.conformance.interop;

import dev.tern.afpacket.AfPacketLink;
import org.agrona.concurrent.IdleStrategy;

/**
 * How a {@code StackRunner} over AF_PACKET idles in the interop tests: a poll that did work is followed at once by
 * the next; after {@value #SPINS} idle polls in a row it waits in {@code poll(2)} on the link's receive socket for at
 * most 1 ms, so a frame wakes it at once and an application's notice (data written, data read, a control call)
 * waits at most 1 ms. The build machine has 2 cores shared with the kernel peer: a busy-spinning stack would take one.
 *
 * <p>Owned by the runner's thread.
 */
final class AwaitFramesIdleStrategy implements IdleStrategy {
    private static final int SPINS = 200;

    private final AfPacketLink link;
    private int idlePolls;

    AwaitFramesIdleStrategy(AfPacketLink link) {
        this.link = link;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            idlePolls = 0;
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        if (++idlePolls < SPINS) {
            Thread.onSpinWait();
        } else {
            link.awaitFrames(1);
        }
    }

    @Override
    public void reset() {
        idlePolls = 0;
    }

    @Override
    public String alias() {
        return "await-frames";
    }
}
