package dev.tern.tcp;

import java.util.Objects;

/**
 * How strictly arriving resets, SYNs and SYN+FIN segments are checked ({@link TcpConfig#segmentChecks}).
 * {@link #RFC_5961}, the default, is Linux's: the protections of RFC 5961 against blind in-window attacks, and a
 * SYN with FIN to a listener dropped. The other choices are RFC 793's older rules and FreeBSD's switches for them
 * ({@code net.inet.tcp.insecure_rst}, {@code insecure_syn}, {@code drop_synfin}).
 *
 * @param inWindowResets a RST anywhere in the receive window resets the connection (RFC 793 §3.4, FreeBSD
 *                       {@code insecure_rst=1}); false: only a RST at exactly RCV.NXT does, any other in the window
 *                       gets a challenge ACK (RFC 5961 §3.2)
 * @param inWindowSyns   a SYN whose sequence number is in the receive window of an established connection (or one
 *                       closing, but not in TIME-WAIT) resets it: Tern sends {@code <SEQ=SND.NXT><ACK=RCV.NXT>
 *                       <CTL=RST,ACK>} and closes (RFC 793 §3.9, FreeBSD {@code insecure_syn=1}); false: any SYN
 *                       gets a challenge ACK (RFC 5961 §4.2)
 * @param synFin         what a segment carrying both SYN and FIN meets
 */
public record SegmentChecks(boolean inWindowResets, boolean inWindowSyns, SynFin synFin) {
    /** RFC 5961's checks, a SYN with FIN to a listener dropped: Linux's behaviour and Tern's default. */
    public static final SegmentChecks RFC_5961 = new SegmentChecks(false, false, SynFin.DROP_AT_LISTENER);

    public SegmentChecks {
        Objects.requireNonNull(synFin, "synFin");
    }

    /** What a segment with both SYN and FIN meets. */
    public enum SynFin {
        /** At a listener it is dropped unanswered (no opening a peer means, a scanner's probe), as Linux does. */
        DROP_AT_LISTENER,
        /** Dropped unanswered in every state, listener or connection (FreeBSD {@code drop_synfin=1}). */
        DROP,
        /**
         * At a listener it is taken as a SYN (RFC 9293 §3.10.7.2): a SYN-ACK for the SYN; the FIN, like data on a
         * SYN, is neither queued nor acknowledged, so the peer sends it again (FreeBSD {@code drop_synfin=0}).
         */
        ANSWER
    }

    /** This with {@link #inWindowResets} set as given. */
    public SegmentChecks withInWindowResets(boolean value) {
        return new SegmentChecks(value, inWindowSyns, synFin);
    }

    /** This with {@link #inWindowSyns} set as given. */
    public SegmentChecks withInWindowSyns(boolean value) {
        return new SegmentChecks(inWindowResets, value, synFin);
    }

    /** This with {@link #synFin} set as given. */
    public SegmentChecks withSynFin(SynFin value) {
        return new SegmentChecks(inWindowResets, inWindowSyns, value);
    }
}
