package dev.tern.script;

import dev.tern.ipv6.wire.Icmpv6Header;

import java.util.Map;

/**
 * The names an ICMP line takes over IPv6. Packetdrill reads a script for its wire's family: over IPv6 {@code icmp}
 * lines are ICMPv6 (RFC 4443), by their own table of names, not IPv4's mapped over. Over IPv6 {@code unreachable
 * frag_needed} is no name (ICMPv6 has Packet Too Big instead, {@code icmp packet_too_big mtu N}), as it is none to
 * packetdrill, which stops at it with "bad ICMP code".
 */
final class ScriptIcmp6 {
    /** ICMPv6's types by packetdrill's names (RFC 4443 §2.1). */
    static final Map<String, Integer> TYPES = Map.of(
        "unreachable", Icmpv6Header.DESTINATION_UNREACHABLE,
        "packet_too_big", Icmpv6Header.PACKET_TOO_BIG,
        "time_exceeded", Icmpv6Header.TIME_EXCEEDED,
        "parameter_problem", Icmpv6Header.PARAMETER_PROBLEM,
        "echo_request", Icmpv6Header.ECHO_REQUEST,
        "echo_reply", Icmpv6Header.ECHO_REPLY);
    /** Destination Unreachable's codes (RFC 4443 §3.1); {@code net_unreachable} is packetdrill's name of code 0 too. */
    static final Map<String, Integer> UNREACHABLE_CODES = Map.of(
        "net_unreachable", Icmpv6Header.NO_ROUTE, "no_route", Icmpv6Header.NO_ROUTE,
        "admin_prohibited", 1, "not_neighbour", 2,
        "address_unreachable", Icmpv6Header.ADDRESS_UNREACHABLE, "port_unreachable", Icmpv6Header.PORT_UNREACHABLE);
    /** Destination Unreachable's codes by Tern's short names too, as over IPv4 ({@code net}, {@code port}). */
    private static final Map<String, Integer> UNREACHABLE_NAMES = Map.of(
        "net_unreachable", Icmpv6Header.NO_ROUTE, "no_route", Icmpv6Header.NO_ROUTE, "net", Icmpv6Header.NO_ROUTE,
        "admin_prohibited", 1, "not_neighbour", 2, "address_unreachable", Icmpv6Header.ADDRESS_UNREACHABLE,
        "port_unreachable", Icmpv6Header.PORT_UNREACHABLE, "port", Icmpv6Header.PORT_UNREACHABLE);
    /** Time Exceeded's codes (RFC 4443 §3.3). */
    static final Map<String, Integer> TIME_EXCEEDED_CODES = Map.of(
        "exceeded_hop_limit", 0, "exceeded_frag_time", Icmpv6Header.REASSEMBLY_TIME_EXCEEDED);
    /** Parameter Problem's codes (RFC 4443 §3.4). */
    static final Map<String, Integer> PARAMETER_PROBLEM_CODES = Map.of(
        "header_field", Icmpv6Header.ERRONEOUS_HEADER_FIELD,
        "unknown_next_header", Icmpv6Header.UNRECOGNIZED_NEXT_HEADER,
        "unknown_option", Icmpv6Header.UNRECOGNIZED_OPTION);
    /** An echo's length when the line gives no {@code [raw (N)]}: room for an IPv6 header and 8, as an error's quote. */
    static final int DEFAULT_LENGTH = Icmpv6Header.LENGTH + 48;

    private ScriptIcmp6() {
    }

    /** The codes of {@code type} a line may write: packetdrill's names, and Tern's short ones of unreachable. */
    static Map<String, Integer> codeNames(int type) {
        return type == Icmpv6Header.DESTINATION_UNREACHABLE ? UNREACHABLE_NAMES : codes(type);
    }

    /** The codes of {@code type} by packetdrill's names; none for a type without named codes. */
    static Map<String, Integer> codes(int type) {
        return switch (type) {
            case Icmpv6Header.DESTINATION_UNREACHABLE -> UNREACHABLE_CODES;
            case Icmpv6Header.TIME_EXCEEDED -> TIME_EXCEEDED_CODES;
            case Icmpv6Header.PARAMETER_PROBLEM -> PARAMETER_PROBLEM_CODES;
            default -> Map.of();
        };
    }

    /** Whether {@code type} is an error, which quotes a packet (RFC 4443 §2.1: types 0 to 127). */
    static boolean isError(int type) {
        return Icmpv6Header.isError(type);
    }

    /** Whether {@code type} is an echo, whose identifier a line may give with {@code id N}. */
    static boolean isEcho(int type) {
        return type == Icmpv6Header.ECHO_REQUEST || type == Icmpv6Header.ECHO_REPLY;
    }

    /** The name of a type, {@code type_N} for one without. */
    static String typeName(int type) {
        return nameOf(TYPES, type, "type_");
    }

    /** The name of a code of {@code type}, {@code code_N} for one without. */
    static String codeName(int type, int code) {
        final Map<String, Integer> codes = codes(type);
        // Code 0 of unreachable is written by its RFC name, not packetdrill's IPv4 alias.
        return type == Icmpv6Header.DESTINATION_UNREACHABLE && code == Icmpv6Header.NO_ROUTE ? "no_route"
            : nameOf(codes, code, "code_");
    }

    /**
     * A message Tern sent, as a line writes it (without its quote): {@code icmp TYPE [CODE] [mtu N] [id N]
     * [raw (N)]}, the code left out when 0 and the type names none.
     */
    static String describe(int type, int code, long mtu, int identifier, int length) {
        final StringBuilder text = new StringBuilder("icmp ").append(typeName(type));
        if (code != 0 || !codes(type).isEmpty()) {
            text.append(' ').append(codeName(type, code));
        }
        if (type == Icmpv6Header.PACKET_TOO_BIG) {
            text.append(" mtu ").append(mtu);
        }
        if (isEcho(type)) {
            text.append(" id ").append(identifier).append(" [raw (").append(length).append(")]");
        }
        return text.toString();
    }

    private static String nameOf(Map<String, Integer> names, int value, String prefix) {
        return names.entrySet().stream().filter(e -> e.getValue() == value).map(Map.Entry::getKey).sorted()
            .findFirst().orElse(prefix + value);
    }
}
