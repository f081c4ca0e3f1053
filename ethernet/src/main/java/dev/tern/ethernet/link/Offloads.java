package dev.tern.ethernet.link;

/**
 * What a {@link Link} does for the stack, as bits of {@link Link#offloads()}, and per-frame receive flags.
 *
 * <p>Transmit checksum offload follows the Linux {@code CHECKSUM_PARTIAL} convention (and virtio's
 * {@code VIRTIO_NET_HDR_F_NEEDS_CSUM}): the stack writes the pseudo-header sum into the L4 checksum field and says
 * where the checksummed region starts ({@link TxFrame#checksumStart}) and where the field is
 * ({@link TxFrame#checksumOffset}); the link or NIC completes it.
 */
public final class Offloads {
    /** The link computes IPv4 header checksums the stack leaves at zero ({@link TxFrame#ipChecksum}). */
    public static final int TX_IPV4_CHECKSUM = 1;
    /** The link completes TCP/UDP checksums from the partial sum the stack leaves in the field. */
    public static final int TX_L4_CHECKSUM = 1 << 1;
    /** The link splits TCP segments larger than the MTU at {@link TxFrame#segmentSize} (TSO/GSO). */
    public static final int TX_TCP_SEGMENTATION = 1 << 2;
    /** The link reports verified checksums with {@link #RX_CHECKSUM_OK}. */
    public static final int RX_CHECKSUM = 1 << 3;

    /** Receive flag: IP and L4 checksums were verified below the stack (or the data never left the host). */
    public static final int RX_CHECKSUM_OK = 1;
    /** Receive flag: the L4 checksum field holds only a partial (pseudo-header) sum; the data is trusted (veth). */
    public static final int RX_CHECKSUM_PARTIAL = 1 << 1;

    private Offloads() {
    }

    public static String describe(int offloads) {
        final StringBuilder text = new StringBuilder();
        if ((offloads & TX_IPV4_CHECKSUM) != 0) {
            text.append("tx-ipv4-csum ");
        }
        if ((offloads & TX_L4_CHECKSUM) != 0) {
            text.append("tx-l4-csum ");
        }
        if ((offloads & TX_TCP_SEGMENTATION) != 0) {
            text.append("tso ");
        }
        if ((offloads & RX_CHECKSUM) != 0) {
            text.append("rx-csum ");
        }
        return text.isEmpty() ? "none" : text.toString().trim();
    }
}
