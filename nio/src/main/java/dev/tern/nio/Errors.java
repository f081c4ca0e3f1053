package dev.tern.nio;

import dev.tern.core.io.SocketError;
import dev.tern.stack.TernSocketException;

import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.PortUnreachableException;
import java.net.SocketException;

/**
 * Tern's socket errors as the exceptions the JDK's channels throw for the same errno, so that code written against
 * the default provider catches what it expects ({@link ConnectException} for a refused connect, a
 * {@link SocketException} "Connection reset", {@link BindException}, ...). The message keeps Tern's description.
 */
final class Errors {
    private Errors() {
    }

    static IOException translate(TernSocketException e) {
        final String message = e.getMessage();
        final IOException translated = switch (e.error()) {
            case SocketError.CONNECTION_REFUSED -> new ConnectException("Connection refused (" + message + ")");
            case SocketError.TIMED_OUT -> new ConnectException("Connection timed out (" + message + ")");
            case SocketError.HOST_UNREACHABLE, SocketError.NET_UNREACHABLE ->
                new NoRouteToHostException("No route to host (" + message + ")");
            case SocketError.ADDRESS_IN_USE -> new BindException("Address already in use (" + message + ")");
            case SocketError.ADDRESS_NOT_AVAILABLE -> new BindException("Cannot assign requested address (" + message + ")");
            case SocketError.CONNECTION_RESET, SocketError.ABORTED -> new SocketException("Connection reset (" + message + ")");
            default -> new SocketException(message);
        };
        translated.initCause(e);
        return translated;
    }

    /** A datagram channel's pending error: the JDK reports ICMP port unreachable as this. */
    static IOException translateDatagram(TernSocketException e) {
        if (e.error() == SocketError.CONNECTION_REFUSED) {
            final PortUnreachableException unreachable = new PortUnreachableException(e.getMessage());
            unreachable.initCause(e);
            return unreachable;
        }
        return translate(e);
    }
}
