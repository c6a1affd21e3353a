-- An example of panto's provider API and request hooks (docs/extensions.md,
-- "Providers and request hooks").  Copy it to ~/.config/panto/extensions/
-- and configure it:
--
--   [extensions."example.provider"]
--   upstream = "http://127.0.0.1:8080"   # an Anthropic- or OpenAI-style server
--   wire = "anthropic-messages"          # or "openai-chat" (then upstream ends in /v1)
--   hooks = true                         # also install the two request hooks
--   log = "/tmp/provider-example.jsonl"  # where the hooks write what they saw
--
-- It registers two providers:
--   example-http/MODEL    the upstream, with a short-lived token fetched (here:
--                         made up) before each request and a per-request header
--   example-echo/MODEL    a provider that produces the turn itself: it answers
--                         with the last user message, or calls a tool when the
--                         message is "call NAME {json}"
return {
  name = "example.provider",
  activate = function(config)
    local requests = 0

    if config.upstream then
      panto.provider.register{
        name = "example-http",
        wire = config.wire or "anthropic-messages",
        base_url = config.upstream,
        default_model = "example-model",
        -- called before every request (retries too): a fresh token and a
        -- header that changes per request (what OAuth refresh or request
        -- signing would compute)
        prepare = function(req)
          requests = requests + 1
          return {
            api_key = "example-token-" .. requests,
            headers = { ["x-example-request"] = tostring(requests) },
          }
        end,
      }
    end

    panto.provider.register{
      name = "example-echo",
      default_model = "echo",
      stream = function(req, out)
        local last = req.messages[#req.messages] or {}
        local text = last.text or ""
        local name, args = text:match("^call (%S+) (.+)$")
        if name then
          out.text("Calling " .. name .. ".")
          out.tool_call{ name = name, input = panto.json.decode(args) }
          out.stop("tool_use")
        elseif last.tool_results then
          out.text("The tool said: " .. last.tool_results[1].content)
          out.stop("stop")
        else
          out.text("echo: " .. text)
          out.stop("stop")
        end
        out.usage{ input_tokens = #req.messages, output_tokens = 3 }
      end,
    }

    if config.hooks then
      local seen = {}
      local function record(item)
        if not config.log then return end
        seen[#seen + 1] = panto.json.encode(item)
        panto.fs.write(config.log, table.concat(seen, "\n") .. "\n")
      end
      panto.on("before_request", function(req)
        record{ event = "before_request", url = req.url, headers = req.headers,
                model = req.body.model }
        req.headers["x-example-hook"] = "added by before_request"
        return req
      end)
      panto.on("after_response", function(info)
        record{ event = "after_response", usage = info.usage, error = info.error,
                stop_reason = info.stop_reason }
      end)
    end
  end,
}
