package dev.tern.testkit.netns;

import java.util.List;

/**
 * Offload settings for one end of the test veth pair, applied with {@code ethtool -K DEV tx .. rx .. tso .. gso ..
 * gro ..}.
 *
 * <p>What they mean on veth: with {@code tx} on, the kernel hands partial checksums across the pair
 * (CHECKSUM_PARTIAL, seen by AF_PACKET as {@code TP_STATUS_CSUMNOTREADY}); with {@code tx} off it computes them
 * before the frame leaves, so a capture shows real checksums. With {@code tso} off, TCP super-frames are segmented
 * in software before they cross. With {@code rx} off the receiving kernel verifies checksums itself.
 */
public record EthtoolOffloads(boolean txChecksum, boolean rxChecksum, boolean tso, boolean gso, boolean gro) {
    /** veth's defaults apart from GRO (off on veth by default anyway): everything offloaded. */
    public static final EthtoolOffloads ALL_ON = new EthtoolOffloads(true, true, true, true, false);
    /** Every checksum computed and every segment cut in software before the frame crosses the pair. */
    public static final EthtoolOffloads ALL_OFF = new EthtoolOffloads(false, false, false, false, false);

    public EthtoolOffloads {
        if (tso && !txChecksum) {
            throw new IllegalArgumentException("TSO needs transmit checksum offload (the kernel turns it off with tx)");
        }
    }

    /** The {@code ethtool -K} arguments after the device name. */
    public List<String> ethtoolArguments() {
        return List.of("tx", onOff(txChecksum), "rx", onOff(rxChecksum), "tso", onOff(tso), "gso", onOff(gso), "gro", onOff(gro));
    }

    private static String onOff(boolean value) {
        return value ? "on" : "off";
    }
}
