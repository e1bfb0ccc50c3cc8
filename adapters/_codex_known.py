"""What Codex 0.169.0 writes in a session rollout (``codex-rollout``,
``adapters/codex_rollout.py``): its line types, ``response_item`` payload types, ``event_msg``
payload types, ``item_completed`` item types and ``parsed_cmd`` entry types, used or not, and its
built-in tools. Names only: the rollout's decoder reads them, its ``ROLLOUT_KNOWS`` lists them
(DESIGN §6 rule 19), and anything else in a rollout is drift.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CALL_OUTPUTS",
    "CALL_STARTS",
    "CODEX_NOT_READS",
    "CODEX_WRITES",
    "COMMAND_TOOLS",
    "EVENT_MSGS",
    "PARSED_TYPES",
    "RESPONSE_ITEMS",
    "ROLLOUT_KINDS",
    "ROLLOUT_LINES",
    "ROLLOUT_QUIET",
    "THREAD_ITEMS",
]


CALL_STARTS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
CALL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
# Calls whose end (and parsed reads) is the harness's CommandExecution record, not the output.
COMMAND_TOOLS = frozenset(
    {"exec_command", "shell", "shell_command", "local_shell", "container.exec"}
)
ROLLOUT_KINDS = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"}
)
ROLLOUT_QUIET = frozenset({"compacted", "world_state", "token_usage_record"})
# Every rollout line type Codex 0.169.0 writes (its ``RolloutItem``), used or not.
ROLLOUT_LINES = ROLLOUT_KINDS | {
    "token_usage_record",
    "dynamic_tools_updated",
    "inter_agent_communication",
    "realtime_item",
}
# ``response_item`` payload types (Codex's ``ResponseItem``).
RESPONSE_ITEMS = (
    CALL_STARTS
    | CALL_OUTPUTS
    | {
        "message",
        "reasoning",
        "agent_message",
        "local_shell_call_output",
        "tool_search_call",
        "tool_search_output",
        "web_search_call",
        "image_generation_call",
        "ghost_snapshot",
        "compaction",
        "compaction_trigger",
        "context_compaction",
        "configuration_update",
        "other",
    }
)
# ``event_msg`` payload types (Codex's ``EventMsg``).
EVENT_MSGS = frozenset(
    {
        "error",
        "warning",
        "agent_message",
        "user_message",
        "agent_message_delta",
        "agent_message_content_delta",
        "agent_reasoning",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content",
        "agent_reasoning_raw_content_delta",
        "agent_reasoning_section_break",
        "reasoning_content_delta",
        "reasoning_raw_content_delta",
        "auth_recovery_started",
        "auth_recovery_completed",
        "guardian_warning",
        "guardian_assessment",
        "realtime_conversation_started",
        "realtime_conversation_realtime",
        "realtime_conversation_closed",
        "realtime_conversation_sdp",
        "realtime_conversation_list_voices_response",
        "model_reroute",
        "model_verification",
        "turn_moderation_metadata",
        "safety_buffering",
        "context_compacted",
        "thread_rolled_back",
        "task_started",
        "task_complete",
        "thread_settings_applied",
        "token_count",
        "session_configured",
        "environment_connected",
        "environment_disconnected",
        "thread_goal_updated",
        "thread_queue_changed",
        "mcp_startup_update",
        "mcp_startup_complete",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "web_search_begin",
        "web_search_end",
        "image_generation_begin",
        "image_generation_end",
        "exec_command_begin",
        "exec_command_output_delta",
        "exec_command_end",
        "terminal_interaction",
        "view_image_tool_call",
        "exec_approval_request",
        "network_approval_resolved",
        "request_permissions",
        "request_user_input",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "elicitation_request",
        "elicitation_abandoned",
        "apply_patch_approval_request",
        "deprecation_notice",
        "stream_error",
        "background_event",
        "patch_apply_begin",
        "patch_apply_updated",
        "patch_apply_end",
        "turn_diff",
        "plan_update",
        "plan_delta",
        "turn_aborted",
        "shutdown_complete",
        "entered_review_mode",
        "exited_review_mode",
        "raw_response_item",
        "raw_response_completed",
        "item_started",
        "item_completed",
        "hook_started",
        "hook_completed",
        "collab_agent_spawn_begin",
        "collab_agent_spawn_end",
        "collab_agent_interaction_begin",
        "collab_agent_interaction_end",
        "collab_waiting_begin",
        "collab_waiting_end",
        "collab_close_begin",
        "collab_close_end",
        "collab_resume_begin",
        "collab_resume_end",
        "sub_agent_activity",
    }
)
# ``item_completed`` item types (Codex's thread items).
THREAD_ITEMS = frozenset(
    {
        "CommandExecution",
        "FileChange",
        "AgentMessage",
        "UserMessage",
        "Reasoning",
        "Plan",
        "McpToolCall",
        "DynamicToolCall",
        "CollabAgentToolCall",
        "WebSearch",
        "ImageView",
        "ImageGeneration",
        "ContextCompaction",
        "EnteredReviewMode",
        "ExitedReviewMode",
        "FunctionCallOutput",
        "HookPrompt",
        "SubAgentActivity",
    }
)
# ``parsed_cmd`` entry types (Codex's ``ParsedCommand``): only ``read`` names a file read.
PARSED_TYPES = frozenset({"read", "list_files", "search", "unknown"})
# Codex's built-in tools that are not reads (its function and custom tools).
CODEX_NOT_READS: Final = {
    "write_stdin": "input to a running command: its output is that command's, no parsed read",
    "local_shell_call": "a local shell action without Codex's parsed reads",
    "update_plan": "the plan (a to-do list), no file",
    "view_image": "shows an image to the model, not a file's text",
    "web_search": "a web search",
    "image_generation": "makes an image",
    "tool_search": "finds tools, not files",
    "js_repl": "runs JavaScript: what it read cannot be told",
    "list_mcp_resources": "lists an MCP server's resources, not the repository's files",
    "list_mcp_resource_templates": "lists an MCP server's resource templates",
    "read_mcp_resource": "an MCP server's resource, not a file of the repository",
    "spawn_agent": "a sub-agent: its reads are not in this stream",
    "send_input": "input to a sub-agent",
    "resume_agent": "resumes a sub-agent",
    "wait_agent": "waits for a sub-agent",
    "close_agent": "ends a sub-agent",
    "request_user_input": "asks the user",
    "request_permissions": "asks for permissions",
}
CODEX_WRITES = frozenset({"apply_patch"})
