package io.quotagate.example;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;

/**
 * A request body read as exactly one JSON value with each field once, as the plans file refuses
 * duplicate keys. "Last one wins" for {@code {"max_tokens": 1, "max_tokens": 4096}}, or "first value
 * wins" for {@code {...}{"capacity": 1}}, would let a proxy that checked the body and this app
 * disagree about what it says.
 */
final class JsonBody {
    /** Refuses a field given twice and anything but white space after the value. */
    static final ObjectMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private JsonBody() {
    }

    /**
     * The body's one JSON value; a missing node if it is empty.
     *
     * @throws JsonProcessingException if it is not exactly one JSON value ({@link #problem} says why)
     */
    static JsonNode read(byte[] body) throws IOException {
        return JSON.readTree(body);
    }

    /** What is wrong with a body {@link #read} refused, in a client's words, without Jackson's class names. */
    static String problem(JsonProcessingException e) {
        // the one mismatch a tree read reports: FAIL_ON_TRAILING_TOKENS
        if (e instanceof MismatchedInputException) {
            JsonLocation at = e.getLocation();
            return "more data after the JSON value" + (at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr());
        }
        return e.getOriginalMessage();
    }
}
