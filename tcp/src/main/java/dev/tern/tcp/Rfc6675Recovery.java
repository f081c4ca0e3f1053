package dev.tern.tcp;

/**
 * RFC 6675 loss recovery as written: on entering, cwnd falls to ssthresh at once (§5 step (4.2)), and the sender
 * sends whatever the scoreboard's pipe leaves room for. Without PRR a recovery that starts with a full window sends
 * nothing until half of it drained, then a burst; kept for comparison.
 *
 * <p>Stateless; shared by every connection of a layer.
 */
public final class Rfc6675Recovery implements LossRecovery {
    public static final String NAME = "rfc6675";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean usesRescueRules() {
        return true;
    }

    @Override
    public void enter(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        tcb.cwnd(c, tcb.ssthresh(c));
    }

    @Override
    public boolean onAck(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        return false;
    }

    @Override
    public void exit(TcpControlBlocks tcb, int c, AckSample ack) {
        tcb.cwnd(c, tcb.ssthresh(c));
    }
}
