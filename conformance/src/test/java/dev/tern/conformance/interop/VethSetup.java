package dev.tern.conformance.interop;

import dev.tern.afpacket.AfPacketOptions;
import dev.tern.afpacket.netns.EthtoolOffloads;
import dev.tern.afpacket.netns.NetnsHarness;

import java.util.stream.Stream;

/**
 * How the veth pair between the kernel peer and Tern is set up for one interop run: its MTU, whether offloads are
 * on, and whether Tern's AF_PACKET link uses the vnet header. Offloads are set the same on both ends
 * ({@code ethtool -K tx rx tso gso}). With the vnet header the stack sees the kernel's checksum status and may ask
 * the link to complete checksums and segment TCP: with offloads on, super-frames cross the veth whole; with them
 * off, the kernel cuts and checksums them in software first, as it does for its own TCP's GSO packets. By default
 * the link has the header exactly when offloads are on.
 */
public record VethSetup(int mtu, boolean offloads, boolean vnetHeader) {
    public static final VethSetup DEFAULT = new VethSetup(1500, false);

    public VethSetup(int mtu, boolean offloads) {
        this(mtu, offloads, offloads);
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
        return new NetnsHarness.Options(mtu, ethtool(), ethtool());
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
        return "MTU " + mtu + ", offloads " + (offloads ? "on" : "off")
            + (vnetHeader != offloads ? (vnetHeader ? ", vnet header" : ", no vnet header") : "");
    }
}
