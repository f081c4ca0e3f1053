package dev.tern.script;

import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpState;

/**
 * The FreeBSD suite's look at the stack's sockets from a shell line: {@code sockstat}'s count of the TCP sockets in
 * a state and {@code tcpdrop}'s abort of those in a state (docs/SCRIPTS.md, "Kernel settings"), over the
 * listeners and connections of the application's open descriptors.
 */
final class ScriptSockstat {
    private ScriptSockstat() {
    }

    /**
     * The sockets in the state sockstat names, on the port when one is named (local or remote), must be as many as
     * the line says. Without {@code grep packetdril} a listener's half-open connections count as SYN_RCVD sockets
     * too, as FreeBSD lists its syncache's entries; connections the application has closed are not counted. Every
     * socket of a run is of its wire's family: {@code sockstat -4} finds none over IPv6, {@code -6} none over IPv4.
     */
    static void check(ScriptRunner runner, TcpLayer tcp, ScriptSockets sockets, ScriptLine.SocketCount count) {
        if (count.ipv6() != runner.ipv6()) {
            report(runner, count, 0, false);
            return;
        }
        final boolean halfOpenCount = !count.applicationOnly()
            && count.state().equals(ScriptDialect.sockstatName(TcpState.SYN_RECEIVED));
        final boolean onListenerPort = count.port() < 0 || count.port() == ScriptRunner.SCRIPT_PORT;
        int found = 0;
        for (int listener : sockets.tcpListeners()) {
            if (onListenerPort && ScriptDialect.sockstatName(TcpState.LISTEN).equals(count.state())) {
                found++;
            }
            if (onListenerPort && halfOpenCount) {
                found += tcp.halfOpen(listener);
            }
        }
        for (int connection : sockets.tcpConnections()) {
            final boolean onPort = count.port() < 0 || tcp.localPort(connection) == count.port()
                || tcp.remotePort(connection) == count.port();
            if (onPort && ScriptDialect.sockstatName(tcp.state(connection)).equals(count.state())) {
                found++;
            }
        }
        report(runner, count, found, halfOpenCount);
    }

    private static void report(ScriptRunner runner, ScriptLine.SocketCount count, int found, boolean halfOpenCount) {
        if (found != count.count()) {
            throw runner.failure(count.line(), "`" + count.text() + "`: " + found + " TCP socket" + (found == 1 ? "" : "s")
                + (halfOpenCount ? "" : " of the application") + " " + (found == 1 ? "is" : "are") + " in "
                + count.state() + (halfOpenCount ? " (a listener's half-open connections included)" : "") + ", not "
                + count.count() + (count.ipv6() == runner.ipv6() ? ""
                : " (sockstat -" + (count.ipv6() ? "6" : "4") + " lists none of this run's "
                + (runner.ipv6() ? "IPv6" : "IPv4") + " sockets)"));
        }
    }

    /** FreeBSD's tcpdrop: the connections of the application's descriptors in the state are aborted. */
    static void drop(ScriptRunner runner, TcpLayer tcp, ScriptSockets sockets, ScriptLine.SocketDrop drop) {
        for (int connection : sockets.tcpConnections()) {
            if (ScriptDialect.sockstatName(tcp.state(connection)).equals(drop.state())) {
                tcp.abort(connection, runner.nowNs());
            }
        }
    }
}
