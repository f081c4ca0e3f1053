package dev.tern.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The arguments of one command: flags that take a value ({@code --ip 198.18.0.2/24}, {@code -c 3}), switches
 * ({@code -u}, {@code --json}) and positional operands. Unknown flags, missing values and bad numbers are
 * {@link UsageException}s that name the flag.
 */
final class Arguments {
    private final String command;
    private final Map<String, String> values = new LinkedHashMap<>();
    private final Map<String, List<String>> repeated = new LinkedHashMap<>();
    private final List<String> switches = new ArrayList<>();
    private final List<String> operands = new ArrayList<>();

    private Arguments(String command) {
        this.command = command;
    }

    /**
     * Parses {@code args} for {@code command}, which knows the flags in {@code valueFlags} (each takes a value) and
     * {@code switchFlags} (each stands alone).
     */
    static Arguments parse(String command, String[] args, Set<String> valueFlags, Set<String> switchFlags) {
        final Arguments parsed = new Arguments(command);
        for (int i = 0; i < args.length; i++) {
            final String arg = args[i];
            if (arg.equals("--")) {
                parsed.operands.addAll(List.of(args).subList(i + 1, args.length));
                break;
            }
            if (arg.startsWith("-") && arg.length() > 1 && !isNumber(arg)) {
                String flag = arg;
                String inline = null;
                final int equals = arg.indexOf('=');
                if (arg.startsWith("--") && equals > 0) {
                    flag = arg.substring(0, equals);
                    inline = arg.substring(equals + 1);
                }
                if (valueFlags.contains(flag)) {
                    final String value;
                    if (inline != null) {
                        value = inline;
                    } else if (i + 1 < args.length) {
                        value = args[++i];
                    } else {
                        throw new UsageException(command + ": " + flag + " needs a value");
                    }
                    parsed.values.put(flag, value);
                    parsed.repeated.computeIfAbsent(flag, k -> new ArrayList<>()).add(value);
                } else if (switchFlags.contains(flag) && inline == null) {
                    parsed.switches.add(flag);
                } else {
                    throw new UsageException(command + ": unknown option " + arg + " (see ./tern help)");
                }
            } else {
                parsed.operands.add(arg);
            }
        }
        return parsed;
    }

    private static boolean isNumber(String arg) {
        return arg.length() > 1 && arg.substring(1).chars().allMatch(Character::isDigit);
    }

    String command() {
        return command;
    }

    boolean has(String flag) {
        return switches.contains(flag) || values.containsKey(flag);
    }

    String value(String flag, String fallback) {
        return values.getOrDefault(flag, fallback);
    }

    List<String> values(String flag) {
        return repeated.getOrDefault(flag, List.of());
    }

    int intValue(String flag, int fallback, int min, int max) {
        final String text = values.get(flag);
        if (text == null) {
            return fallback;
        }
        final int value;
        try {
            value = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new UsageException(command + ": " + flag + " wants a whole number, got '" + text + "'");
        }
        if (value < min || value > max) {
            throw new UsageException(command + ": " + flag + " must be " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    double doubleValue(String flag, double fallback, double min, double max) {
        final String text = values.get(flag);
        if (text == null) {
            return fallback;
        }
        final double value;
        try {
            value = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new UsageException(command + ": " + flag + " wants a number, got '" + text + "'");
        }
        if (!(value >= min && value <= max)) {
            throw new UsageException(command + ": " + flag + " must be between " + min + " and " + max + ", got " + text);
        }
        return value;
    }

    long longValue(String flag, long fallback) {
        final String text = values.get(flag);
        if (text == null) {
            return fallback;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new UsageException(command + ": " + flag + " wants a whole number, got '" + text + "'");
        }
    }

    List<String> operands() {
        return operands;
    }

    /** Exactly {@code min..max} operands, else a usage error quoting {@code usage}. */
    List<String> operands(int min, int max, String usage) {
        if (operands.size() < min || operands.size() > max) {
            throw new UsageException(command + ": " + (operands.size() < min ? "missing operand" : "too many operands")
                + "; usage: tern " + usage);
        }
        return operands;
    }
}
