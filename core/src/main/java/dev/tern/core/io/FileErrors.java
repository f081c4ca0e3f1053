package dev.tern.core.io;

import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.Locale;

/**
 * Why a file operation failed, in words. The JDK's file exceptions carry only the file's name as their message; the
 * reason is in their class or in {@link FileSystemException#getReason()}, which a user should not have to decode.
 */
public final class FileErrors {
    private FileErrors() {
    }

    /** The reason in words ("no such file or directory"), or null when the exception does not say. */
    public static String reason(FileSystemException e) {
        return switch (e) {
            case AccessDeniedException d -> "permission denied";
            case NoSuchFileException n -> "no such file or directory";
            case FileAlreadyExistsException f -> "already exists";
            default -> e.getReason() == null ? null : e.getReason().toLowerCase(Locale.ROOT);
        };
    }

    /** {@link #reason(FileSystemException)} for a file exception, else the exception's message. */
    public static String reason(Exception e) {
        if (e instanceof FileSystemException f && reason(f) != null) {
            return reason(f);
        }
        return e.getMessage();
    }
}
