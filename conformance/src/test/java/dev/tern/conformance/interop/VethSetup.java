package dev.tern.conformance.interop;

import dev.tern.afpacket.AfPacketOptions;
import dev.tern.testkit.netns.EthtoolOffloads;
import dev.tern.testkit.netns.NetnsHarness;

import java.util.stream.Stream;

/**
 * How the veth pair between the kernel peer and Tern is set up for one interop run: its MTU, whether offloads are
 * on, whether Tern's AF_PACKET link uses the vnet header, and which link Tern opens on its end. Offloads are set the
 * same on both ends ({@code ethtool -K tx rx tso gso}). With the vnet header the stack sees the kernel's checksum
 * status and may ask the link to complete checksums and segment TCP: with offloads on, super-frames cross the veth
 * whole; with them off, the kernel cuts and checksums them in software first, as it does for its own TCP's GSO
 * packets. By default the link has the header exactly when offloads are on.
 *
 * <p>On {@link TernLink#AF_XDP} "offloads on" is every offload that can work with it: all on at Tern's end, and at
 * the peer's end all but transmit checksumming ({@link #AF_XDP_PEER_OFFLOADS}). AF_XDP hands Tern the frame's bytes
 * and nothing else, so a partial checksum (CHECKSUM_PARTIAL, what a peer with {@code tx on} sends across veth) cannot
 * be told from a corrupted one; see docs/DESIGN.md, "The AF_XDP link".
 */
public record VethSetup(int mtu, boolean offloads, boolean vnetHeader, TernLink link) {
    public static final VethSetup DEFAULT = new VethSetup(1500, false);

    /**
     * The peer's offloads that work against Tern on AF_XDP: checksums computed before the frame leaves (tx off, and
     * with it TSO, which needs it), receive checksum offload, and GSO (the kernel cuts its own super-frames in
     * software, checksums included, before they cross).
     */
    public static final EthtoolOffloads AF_XDP_PEER_OFFLOADS = new EthtoolOffloads(false, true, false, true, false);

    /** The link Tern opens on its end of the pair. */
    public enum TernLink { AF_PACKET, AF_XDP }

    public VethSetup {
        if (link == TernLink.AF_XDP && vnetHeader) {
            throw new IllegalArgumentException("AF_XDP has no vnet header");
        }
    }

    public VethSetup(int mtu, boolean offloads, boolean vnetHeader) {
        this(mtu, offloads, vnetHeader, TernLink.AF_PACKET);
    }

    public VethSetup(int mtu, boolean offloads) {
        this(mtu, offloads, offloads);
    }

    /** Tern on the AF_XDP link (copy mode and native XDP on veth). */
    public static VethSetup afXdp(int mtu, boolean offloads) {
        return new VethSetup(mtu, offloads, false, TernLink.AF_XDP);
    }

    /** AF_XDP at MTU 1500 with offloads off, and with those that work on ({@link #AF_XDP_PEER_OFFLOADS}). */
    public static Stream<VethSetup> afXdpOffloadsOffAndOn() {
        return Stream.of(afXdp(1500, false), afXdp(1500, true));
    }

    /** {@link #offloadsOffAndOn} on AF_PACKET, then on AF_XDP. */
    public static Stream<VethSetup> offloadsOffAndOnOnBothLinks() {
        return Stream.concat(offloadsOffAndOn(), afXdpOffloadsOffAndOn());
    }

    public boolean afXdp() {
        return link == TernLink.AF_XDP;
    }

    /** Every combination the ARP/ICMP interop runs under: MTU 1500 and 9000, offloads off and on. */
    public static Stream<VethSetup> all() {
        return Stream.of(new VethSetup(1500, false), new VethSetup(1500, true), new VethSetup(9000, false),
            new VethSetup(9000, true));
    }

    /** MTU 1500 with offloads off and on. */
    public static Stream<VethSetup> offloadsOffAndOn() {
        return Stream.of(new VethSetup(1500, false), new VethSetup(1500, true));
    }

    /**
     * {@link #offloadsOffAndOn}, and offloads off with the vnet header: Tern's TCP hands the link super-frames and the
     * kernel segments them in software before they cross (the configuration the veth benchmark measures).
     */
    public static Stream<VethSetup> offloadsOffAndOnAndSoftwareSegmentation() {
        return Stream.concat(offloadsOffAndOn(), Stream.of(new VethSetup(1500, false, true)));
    }

    public NetnsHarness.Options harnessOptions() {
        return new NetnsHarness.Options(mtu, ethtool(), afXdp() && offloads ? AF_XDP_PEER_OFFLOADS : ethtool());
    }

    public EthtoolOffloads ethtool() {
        return offloads ? EthtoolOffloads.ALL_ON : EthtoolOffloads.ALL_OFF;
    }

    /**
     * Tern's AF_PACKET link: the vnet header as {@link #vnetHeader} says; receive through the TPACKET_V2 frame ring with
     * 64 KiB slots, as the {@code tern} command does (each frame reaches the stack at once, and the veth peer's
     * TSO/GSO super-frames of up to 64 KiB fit), 1024 of them (about 65 MiB), so a TCP window of frames in flight fits.
     */
    public AfPacketOptions linkOptions() {
        return AfPacketOptions.throughput().vnetHeader(vnetHeader);
    }

    /** Fragments an IPv4 datagram with {@code payload} bytes after its 20-byte header needs at this MTU. */
    public int fragmentsFor(int payload) {
        final int perFragment = (mtu - 20) / 8 * 8;
        return payload + 20 <= mtu ? 1 : (payload + perFragment - 1) / perFragment;
    }

    @Override
    public String toString() {
        if (afXdp()) {
            return "AF_XDP, MTU " + mtu + ", offloads " + (offloads ? "on but the peer's tx checksum" : "off");
        }
        return "MTU " + mtu + ", offloads " + (offloads ? "on" : "off")
            + (vnetHeader != offloads ? (vnetHeader ? ", vnet header" : ", no vnet header") : "");
    }
}
