import type { NotifyConfig } from "./config"
import type { News } from "./news"

/**
 * A notice as each webhook kind expects its body: the generic one as JSON with the facts, the chats as their
 * plain-text message (Slack's incoming webhook, Feishu/Lark's custom bot, DingTalk's and WeCom's group robots).
 */
export namespace Formats {
  export function body(kind: Exclude<NotifyConfig.Kind, "desktop">, notice: News.Notice): unknown {
    const text = `${notice.title}\n${notice.text}`
    switch (kind) {
      case "webhook":
        return { source: "aircoding", key: notice.key, event: notice.event, title: notice.title, text: notice.text }
      case "slack":
        return { text }
      case "feishu":
        return { msg_type: "text", content: { text } }
      case "dingtalk":
      case "wecom":
        return { msgtype: "text", text: { content: text } }
    }
  }

  /**
   * Why a chat refused a message it answered with HTTP 200: DingTalk and WeCom say `errcode`, Feishu `code`
   * (or `StatusCode`), each 0 when the message went.
   */
  export function refusal(kind: NotifyConfig.Kind, body: string): string | undefined {
    if (kind !== "dingtalk" && kind !== "wecom" && kind !== "feishu") return undefined
    let parsed: Record<string, unknown>
    try {
      parsed = JSON.parse(body) as Record<string, unknown>
    } catch {
      return undefined
    }
    const code = parsed.errcode ?? parsed.code ?? parsed.StatusCode
    if (code === undefined || code === 0) return undefined
    return `the chat answered code ${String(code)}: ${String(parsed.errmsg ?? parsed.msg ?? parsed.StatusMessage ?? "")}`.trim()
  }
}
