package dev.tern.stack;

import dev.tern.core.io.SocketError;

import java.io.IOException;

/**
 * A socket operation failed for a reason the network gave (refused, reset, unreachable, ...). Subclasses name the
 * common cases so callers can catch exactly what they handle; {@link #error()} is the {@link SocketError} code.
 */
public class TernSocketException extends IOException {
    private final int error;

    public TernSocketException(int error, String message) {
        super(message);
        this.error = error;
    }

    public int error() {
        return error;
    }

    /** The exception for {@code error}, with {@code context} (the socket, the operation) in its message. */
    public static TernSocketException of(int error, String context) {
        final String message = context + ": " + SocketError.describe(error);
        return switch (error) {
            case SocketError.CONNECTION_REFUSED -> new ConnectionRefusedException(message);
            case SocketError.CONNECTION_RESET -> new ConnectionResetException(message);
            case SocketError.TIMED_OUT -> new ConnectionTimedOutException(message);
            case SocketError.HOST_UNREACHABLE -> new HostUnreachableException(message);
            case SocketError.NET_UNREACHABLE -> new NetworkUnreachableException(message);
            case SocketError.ADDRESS_IN_USE -> new AddressInUseException(message);
            case SocketError.MESSAGE_TOO_LONG -> new MessageTooLongException(message);
            default -> new TernSocketException(error, message);
        };
    }

    /** ECONNREFUSED. */
    public static final class ConnectionRefusedException extends TernSocketException {
        public ConnectionRefusedException(String message) {
            super(SocketError.CONNECTION_REFUSED, message);
        }
    }

    /** ECONNRESET. */
    public static final class ConnectionResetException extends TernSocketException {
        public ConnectionResetException(String message) {
            super(SocketError.CONNECTION_RESET, message);
        }
    }

    /** ETIMEDOUT. */
    public static final class ConnectionTimedOutException extends TernSocketException {
        public ConnectionTimedOutException(String message) {
            super(SocketError.TIMED_OUT, message);
        }
    }

    /** EHOSTUNREACH. */
    public static final class HostUnreachableException extends TernSocketException {
        public HostUnreachableException(String message) {
            super(SocketError.HOST_UNREACHABLE, message);
        }
    }

    /** ENETUNREACH. */
    public static final class NetworkUnreachableException extends TernSocketException {
        public NetworkUnreachableException(String message) {
            super(SocketError.NET_UNREACHABLE, message);
        }
    }

    /** EADDRINUSE. */
    public static final class AddressInUseException extends TernSocketException {
        public AddressInUseException(String message) {
            super(SocketError.ADDRESS_IN_USE, message);
        }
    }

    /** EMSGSIZE. */
    public static final class MessageTooLongException extends TernSocketException {
        public MessageTooLongException(String message) {
            super(SocketError.MESSAGE_TOO_LONG, message);
        }
    }
}
