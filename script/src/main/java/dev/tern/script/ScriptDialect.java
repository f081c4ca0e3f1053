package dev.tern.script;

import dev.tern.tcp.TcpState;

import java.util.Map;

/**
 * The operating system whose scripts a profile runs, for what its scripts name by the system's own words: the names
 * and numbers of TCP states in {@code tcpi_state} (Linux's {@code TCP_ESTABLISHED} is 1, FreeBSD's
 * {@code TCPI_ESTABLISHED}, its {@code TCPS_ESTABLISHED} of netinet/tcp_fsm.h, is 4) and the meaning of
 * {@code getsockopt SO_RCVBUF}.
 */
public enum ScriptDialect {
    LINUX("Linux", Map.ofEntries(Map.entry("TCP_ESTABLISHED", 1L), Map.entry("TCP_SYN_SENT", 2L),
        Map.entry("TCP_SYN_RECV", 3L), Map.entry("TCP_FIN_WAIT1", 4L), Map.entry("TCP_FIN_WAIT2", 5L),
        Map.entry("TCP_TIME_WAIT", 6L), Map.entry("TCP_CLOSE", 7L), Map.entry("TCP_CLOSE_WAIT", 8L),
        Map.entry("TCP_LAST_ACK", 9L), Map.entry("TCP_LISTEN", 10L), Map.entry("TCP_CLOSING", 11L))),
    FREEBSD("FreeBSD", Map.ofEntries(Map.entry("TCPI_CLOSED", 0L), Map.entry("TCPI_LISTEN", 1L), Map.entry("TCPI_SYN_SENT", 2L),
        Map.entry("TCPI_SYN_RECEIVED", 3L), Map.entry("TCPI_ESTABLISHED", 4L), Map.entry("TCPI_CLOSE_WAIT", 5L),
        Map.entry("TCPI_FIN_WAIT_1", 6L), Map.entry("TCPI_CLOSING", 7L), Map.entry("TCPI_LAST_ACK", 8L),
        Map.entry("TCPI_FIN_WAIT_2", 9L), Map.entry("TCPI_TIME_WAIT", 10L)));

    private final String systemName;
    private final Map<String, Long> stateNumbers;

    ScriptDialect(String systemName, Map<String, Long> stateNumbers) {
        this.systemName = systemName;
        this.stateNumbers = stateNumbers;
    }

    /**
     * The system's name as packetdrill's {@code #ifdef} knows it ({@code Linux}, {@code FreeBSD}: the forms of the
     * FreeBSD suite's packetdrill); a profile of this dialect defines it.
     */
    public String systemName() {
        return systemName;
    }

    /** The system's names of TCP states for {@code tcpi_state}, with its numbers. */
    public Map<String, Long> stateNumbers() {
        return stateNumbers;
    }

    /**
     * The system's name of Tern's state {@code state} ({@link TcpState}); a connection that is gone (or any state
     * Tern has and the system names otherwise) is the system's closed state.
     */
    public String stateName(int state) {
        final boolean linux = this == LINUX;
        return switch (state) {
            case TcpState.LISTEN -> linux ? "TCP_LISTEN" : "TCPI_LISTEN";
            case TcpState.SYN_SENT -> linux ? "TCP_SYN_SENT" : "TCPI_SYN_SENT";
            case TcpState.SYN_RECEIVED -> linux ? "TCP_SYN_RECV" : "TCPI_SYN_RECEIVED";
            case TcpState.ESTABLISHED -> linux ? "TCP_ESTABLISHED" : "TCPI_ESTABLISHED";
            case TcpState.FIN_WAIT_1 -> linux ? "TCP_FIN_WAIT1" : "TCPI_FIN_WAIT_1";
            case TcpState.FIN_WAIT_2 -> linux ? "TCP_FIN_WAIT2" : "TCPI_FIN_WAIT_2";
            case TcpState.CLOSE_WAIT -> linux ? "TCP_CLOSE_WAIT" : "TCPI_CLOSE_WAIT";
            case TcpState.CLOSING -> linux ? "TCP_CLOSING" : "TCPI_CLOSING";
            case TcpState.LAST_ACK -> linux ? "TCP_LAST_ACK" : "TCPI_LAST_ACK";
            case TcpState.TIME_WAIT -> linux ? "TCP_TIME_WAIT" : "TCPI_TIME_WAIT";
            default -> linux ? "TCP_CLOSE" : "TCPI_CLOSED";
        };
    }

    /** The name of the listening state ({@code tcpi_state} of a listener). */
    public String listenName() {
        return stateName(TcpState.LISTEN);
    }

    /** FreeBSD's sockstat names of its states, by its state numbers (tcpstates[] of netinet/tcp_fsm.h). */
    private static final String[] SOCKSTAT_NAMES = {"CLOSED", "LISTEN", "SYN_SENT", "SYN_RCVD", "ESTABLISHED",
        "CLOSE_WAIT", "FIN_WAIT_1", "CLOSING", "LAST_ACK", "FIN_WAIT_2", "TIME_WAIT"};

    /** FreeBSD's sockstat name of Tern's state {@code state} ({@link TcpState}). */
    static String sockstatName(int state) {
        return SOCKSTAT_NAMES[FREEBSD.stateNumbers.get(FREEBSD.stateName(state)).intValue()];
    }
}
