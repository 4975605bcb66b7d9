package io.quotagate.example;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.filter.ActualCost;
import io.quotagate.filter.InvalidCostInputException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.InputStream;

/**
 * {@code POST /v1/completions} with {@code {"prompt": "...", "max_tokens": N}}: an LLM-style endpoint
 * priced in tokens. {@link #estimate} reserves the prompt's tokens (about one per 4 characters) plus
 * {@code max_tokens} before the request runs; the servlet "generates" a quarter of {@code max_tokens}
 * (rounded up) and reports the tokens really used, so the filter refunds the rest.
 */
final class Completions extends ApiServlet {
    private static final long serialVersionUID = 1L;

    /** The route name in the plans file. */
    static final String ROUTE = "completions";
    /** The largest {@code max_tokens} accepted. */
    static final int MAX_TOKENS_LIMIT = 4096;
    private static final ObjectMapper JSON = JsonBody.JSON;

    /** A parsed, validated request. */
    record Request(String prompt, int maxTokens) {
        long promptTokens() {
            return (prompt.length() + 3) / 4;
        }

        long reservation() {
            return promptTokens() + maxTokens;
        }
    }

    /** The cost estimator registered for {@link #ROUTE}: prompt tokens + {@code max_tokens}. */
    static long estimate(HttpServletRequest request, byte[] body) {
        return parse(body).reservation();
    }

    /**
     * @throws InvalidCostInputException for anything but one JSON object ({@link JsonBody}) with a string
     *                                   {@code prompt} and a whole {@code max_tokens} from 1 to {@value #MAX_TOKENS_LIMIT}
     */
    static Request parse(byte[] body) {
        JsonNode root;
        try {
            root = JsonBody.read(body);
        } catch (JsonProcessingException e) { // a field twice or a second object: which one would be priced?
            throw new InvalidCostInputException("The body must be one JSON object {\"prompt\": \"...\", \"max_tokens\": N} ("
                    + JsonBody.problem(e) + ").", e);
        } catch (IOException e) {
            throw new InvalidCostInputException("The body could not be read.", e);
        }
        if (root == null || !root.isObject()) {
            throw new InvalidCostInputException("The body must be a JSON object {\"prompt\": \"...\", \"max_tokens\": N}.");
        }
        JsonNode prompt = root.get("prompt");
        if (prompt == null || !prompt.isTextual()) throw new InvalidCostInputException("prompt must be a string.");
        JsonNode max = root.get("max_tokens");
        if (max == null || !max.isIntegralNumber() || !max.canConvertToInt()
                || max.intValue() < 1 || max.intValue() > MAX_TOKENS_LIMIT) {
            throw new InvalidCostInputException("max_tokens must be a whole number from 1 to " + MAX_TOKENS_LIMIT + ".");
        }
        return new Request(prompt.textValue(), max.intValue());
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        byte[] body;
        try (InputStream in = req.getInputStream()) {
            body = in.readAllBytes(); // replayed by the filter, which read (and bounded) it first
        }
        Request r;
        try {
            r = parse(body);
        } catch (InvalidCostInputException e) { // reached only without the filter in front
            ExampleServlets.json(resp, 400, "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
                    + JSON.writeValueAsString(e.getMessage()) + "}", "application/problem+json");
            return;
        }
        long completionTokens = (r.maxTokens() + 3) / 4;
        long used = r.promptTokens() + completionTokens;
        ActualCost.report(req, used);
        var out = JSON.createObjectNode();
        out.put("object", "text_completion");
        out.put("text", "lorem ".repeat((int) completionTokens).trim());
        var usage = out.putObject("usage");
        usage.put("prompt_tokens", r.promptTokens());
        usage.put("completion_tokens", completionTokens);
        usage.put("total_tokens", used);
        usage.put("reserved_tokens", ActualCost.reserved(req).orElse(r.reservation()));
        ExampleServlets.json(resp, 200, JSON.writeValueAsString(out), "application/json");
    }
}
