package dev.tern.stack.testing;

import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;

import java.util.List;

/**
 * The hostile IPv4 input Tern's input checks are tested with, one table for both wires: the memory wire
 * ({@code Ipv4HardeningTest}) and the kernel interop over veth ({@code Ipv4HardeningInteropTest}), so that the two
 * cannot drift apart. Reasons are the suffixes of Tern's {@code ipv4.drop.*} counters (docs/DESIGN.md, "IPv4 input
 * checks, in order").
 */
public final class HostileIpv4 {
    private HostileIpv4() {
    }

    /** A source address no single host can have (RFC 1122 §3.2.1.3, RFC 1812 §5.3.7), and the reason it is dropped. */
    public record MartianSource(String what, int source, String reason) {
        @Override
        public String toString() {
            return what;
        }
    }

    /** A malformed option list (RFC 791 §3.1), the reason it is dropped, and the octet a Parameter Problem names. */
    public record MalformedOption(String what, int[] options, String reason, int pointer) {
        @Override
        public String toString() {
            return what;
        }
    }

    /** One of each martian class, for a receiver at {@code receiver} (a subnet of /30 or wider). */
    public static List<MartianSource> martianSources(InterfaceAddress receiver) {
        final int self = receiver.address();
        final int subnetBroadcast = receiver.broadcast();
        return List.of(
            new MartianSource("0.0.0.0 to a unicast address", 0, "martian_source_zero"),
            new MartianSource("this network, another host (0/8)", Ipv4Address.parse("0.1.2.3"), "martian_source_zero"),
            new MartianSource("loopback", Ipv4Address.parse("127.0.0.1"), "martian_source_loopback"),
            new MartianSource("loopback, any of 127/8", Ipv4Address.parse("127.200.0.9"), "martian_source_loopback"),
            new MartianSource("limited broadcast", Ipv4Address.LIMITED_BROADCAST, "martian_source_broadcast"),
            new MartianSource("the subnet's directed broadcast", subnetBroadcast, "martian_source_broadcast"),
            new MartianSource("the subnet's address (4.2BSD's broadcast)", receiver.network(), "martian_source_broadcast"),
            new MartianSource("all-systems group", Ipv4Address.ALL_SYSTEMS, "martian_source_multicast"),
            new MartianSource("an administratively scoped group", Ipv4Address.parse("239.1.2.3"), "martian_source_multicast"),
            new MartianSource("class E", Ipv4Address.parse("240.0.0.1"), "martian_source_class_e"),
            new MartianSource("class E, top", Ipv4Address.parse("255.255.255.254"), "martian_source_class_e"),
            new MartianSource("the receiver's own address (land)", self, "martian_source_self"));
    }

    /** One malformed option list per check of {@code Ipv4Options}; each pads to a 4-byte multiple with End of List. */
    public static List<MalformedOption> malformedOptions() {
        return List.of(
            new MalformedOption("option length 0", new int[] {7, 0, 4, 0}, "option_bad_length", 21),
            new MalformedOption("option length 1", new int[] {1, 148, 1, 0}, "option_bad_length", 22),
            new MalformedOption("option running past the header", new int[] {7, 39, 4, 0}, "option_past_header", 21),
            new MalformedOption("no room for the length octet", new int[] {1, 1, 1, 68}, "option_past_header", 23),
            new MalformedOption("record route pointer 3", new int[] {7, 7, 3, 0, 0, 0, 0}, "option_bad_pointer", 22),
            new MalformedOption("record route pointer inside an address", new int[] {7, 11, 6, 0, 0, 0, 0, 0, 0, 0, 0},
                "option_bad_pointer", 22),
            new MalformedOption("timestamp pointer 1", new int[] {68, 8, 1, 0, 0, 0, 0, 0}, "option_bad_pointer", 22),
            new MalformedOption("timestamp flag 5", new int[] {68, 8, 5, 5, 0, 0, 0, 0}, "option_bad_timestamp_flag", 23),
            new MalformedOption("loose source route pointer 3", new int[] {131, 7, 3, 198, 18, 0, 1}, "option_bad_pointer", 22),
            new MalformedOption("strict source route pointer 1", new int[] {1, 137, 7, 1, 198, 18, 0, 1},
                "option_bad_pointer", 23),
            new MalformedOption("record route twice", new int[] {7, 3, 4, 7, 3, 4}, "option_duplicate", 23));
    }
}
