package dev.tern.lab.link;

/** Bad input to the lab (a scenario or trace file), with a message of the form {@code FILE:LINE: reason}. */
public final class LabInputException extends IllegalArgumentException {
    public LabInputException(String message) {
        super(message);
    }
}
