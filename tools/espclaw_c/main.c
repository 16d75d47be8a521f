/* A host driver of ESP-Claw's C claw_memory and session manager, built by run.py from an
 * ESP-Claw checkout. It reads one JSON command per line on stdin and answers one JSON line
 * per command on stdout (logs go to stderr). The first command must be "init".
 *
 *   {"op":"init","root":R,"backend":"openai_compatible"}   claw_memory_init (R/sessions, R/memory)
 *   {"op":"load","sid":S}                   the Session History provider's load (the request body)
 *   {"op":"persist","sid":S,"records":[[type,json|null,text|null],...],"done":bool}
 *                                           claw_memory_persist_context_callback (done: turn_completed)
 *   {"op":"gate","sid":S}                   claw_memory_request_gate_callback
 *   {"op":"delete","sid":S}                 claw_memory_delete_session_history
 *   {"op":"store","content":..,"tags":..,"keywords":..,"source":..}
 *   {"op":"update","id":..,...} {"op":"forget","id":..} {"op":"list"}
 *   {"op":"recall","labels":[..],"limit":n} {"op":"mcompact"}   claw_memory_compact_internal(true)
 *   {"op":"chat_sid"|"chat_new"|"chat_list"|"chat_switch"|"chat_delete","channel":..,"chat_id":..,"alias":..}
 *                                           claw_session_mgr (its chat_map files)
 * MIT license. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cJSON.h"
#include "claw_memory.h"
#include "claw_session_mgr.h"

static const char *str_of(cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void copy_field(char *dst, size_t size, const char *src)
{
    if (src) {
        snprintf(dst, size, "%s", src);
    }
}

static esp_err_t delete_handler(const char *session_id, bool *out_deleted_any, void *user_ctx)
{
    (void)user_ctx;
    return claw_memory_delete_session_history(session_id, out_deleted_any);
}

static void reply(cJSON *out, esp_err_t err)
{
    char *text;

    cJSON_AddStringToObject(out, "err", esp_err_to_name(err));
    text = cJSON_PrintUnformatted(out);
    printf("%s\n", text);
    fflush(stdout);
    free(text);
    cJSON_Delete(out);
}

static void add_json_text(cJSON *out, const char *key, char *text)
{
    if (text) {
        cJSON_AddStringToObject(out, key, text);
        free(text);
    } else {
        cJSON_AddNullToObject(out, key);
    }
}

static esp_err_t do_init(cJSON *cmd)
{
    static char sessions[256], memory[256];
    claw_memory_config_t config = {0};
    const char *root = str_of(cmd, "root");
    esp_err_t err;

    snprintf(sessions, sizeof(sessions), "%s/sessions", root ? root : ".");
    snprintf(memory, sizeof(memory), "%s/memory", root ? root : ".");
    config.session_root_dir = sessions;
    config.memory_root_dir = memory;
    config.max_message_chars = 4096;   /* app_claw's values */
    config.max_tool_iterations = 32;
    config.llm.backend_type = str_of(cmd, "backend");
    /* the data root exists on a board; the manager makes one level of folders */
    mkdir(root ? root : ".", 0755);
    mkdir(sessions, 0755);
    err = claw_session_mgr_set_session_root_dir(sessions);
    if (err == ESP_OK) {
        err = claw_session_mgr_set_delete_session_handler(delete_handler, NULL);
    }
    if (err == ESP_OK) {
        err = claw_memory_init(&config);
    }
    return err;
}

static void item_from(cJSON *cmd, claw_memory_item_t *item)
{
    memset(item, 0, sizeof(*item));
    copy_field(item->id, sizeof(item->id), str_of(cmd, "id"));
    copy_field(item->source, sizeof(item->source), str_of(cmd, "source"));
    copy_field(item->content, sizeof(item->content), str_of(cmd, "content"));
    copy_field(item->tags, sizeof(item->tags), str_of(cmd, "tags"));
    copy_field(item->keywords, sizeof(item->keywords), str_of(cmd, "keywords"));
}

static void do_chat(const char *op, cJSON *cmd, cJSON *out, esp_err_t *err)
{
    const char *channel = str_of(cmd, "channel");
    const char *chat_id = str_of(cmd, "chat_id");
    const char *alias = str_of(cmd, "alias");
    char buf[CLAW_SESSION_MGR_ID_SIZE] = {0};

    if (strcmp(op, "chat_sid") == 0) {
        claw_session_build_context_t ctx = {
            .session_policy = CLAW_SESSION_POLICY_CHAT,
            .source_channel = channel,
            .chat_id = chat_id,
        };
        size_t len = 0;

        *err = claw_session_mgr_build_session_id(&ctx, buf, sizeof(buf), &len);
        cJSON_AddStringToObject(out, "sid", buf);
    } else if (strcmp(op, "chat_new") == 0) {
        *err = claw_session_mgr_new_chat_session(0, channel, chat_id, alias, alias != NULL,
                                                 buf, sizeof(buf));
        cJSON_AddStringToObject(out, "alias", buf);
    } else if (strcmp(op, "chat_switch") == 0) {
        *err = claw_session_mgr_switch_chat_session(0, channel, chat_id, alias, buf, sizeof(buf));
        cJSON_AddStringToObject(out, "alias", buf);
    } else if (strcmp(op, "chat_delete") == 0) {
        *err = claw_session_mgr_delete_chat_session(0, channel, chat_id, alias, buf, sizeof(buf));
        cJSON_AddStringToObject(out, "alias", buf);
    } else {
        claw_session_mgr_alias_map_t *map = calloc(1, sizeof(*map));
        cJSON *arr = cJSON_AddArrayToObject(out, "sessions");
        size_t i;

        *err = claw_session_mgr_list_chat_sessions(0, channel, chat_id, map);
        if (*err == ESP_OK) {
            for (i = 0; i < map->session_count; i++) {
                cJSON_AddItemToArray(arr, cJSON_CreateString(map->sessions[i]));
            }
            cJSON_AddStringToObject(out, "current", map->current_alias);
        }
        free(map);
    }
}

static esp_err_t do_persist(cJSON *cmd)
{
    cJSON *recs = cJSON_GetObjectItem(cmd, "records");
    size_t n = (size_t)cJSON_GetArraySize(recs), i = 0;
    claw_core_context_record_t *records = calloc(n ? n : 1, sizeof(*records));
    claw_core_request_t request = {.request_id = 1, .session_id = str_of(cmd, "sid")};
    claw_core_context_persist_batch_t batch = {
        .session_id = str_of(cmd, "sid"),
        .request = &request,
        .records = records,
        .record_count = n,
        .turn_completed = cJSON_IsTrue(cJSON_GetObjectItem(cmd, "done")),
    };
    cJSON *r;
    esp_err_t err;

    cJSON_ArrayForEach(r, recs) {
        cJSON *mj = cJSON_GetArrayItem(r, 1), *tx = cJSON_GetArrayItem(r, 2);

        records[i].type = (claw_core_context_record_type_t)cJSON_GetArrayItem(r, 0)->valueint;
        records[i].message_json = cJSON_IsString(mj) ? mj->valuestring : NULL;
        records[i].text = cJSON_IsString(tx) ? tx->valuestring : NULL;
        i++;
    }
    err = claw_memory_persist_context_callback(&batch, NULL);
    free(records);
    return err;
}

int main(void)
{
    static char line[1 << 20];

    while (fgets(line, sizeof(line), stdin)) {
        cJSON *cmd = cJSON_Parse(line);
        cJSON *out = cJSON_CreateObject();
        const char *op = cmd ? str_of(cmd, "op") : NULL;
        esp_err_t err = ESP_ERR_INVALID_ARG;

        if (!op) {
            reply(out, err);
            cJSON_Delete(cmd);
            continue;
        }
        if (strcmp(op, "init") == 0) {
            err = do_init(cmd);
        } else if (strcmp(op, "load") == 0) {
            claw_core_request_t request = {.request_id = 1, .session_id = str_of(cmd, "sid")};
            claw_core_context_t ctx = {0};

            err = claw_memory_session_history_provider.collect(&request, &ctx, NULL);
            add_json_text(out, "json", err == ESP_OK ? ctx.content : NULL);
        } else if (strcmp(op, "persist") == 0) {
            err = do_persist(cmd);
        } else if (strcmp(op, "gate") == 0) {
            claw_core_request_t request = {.request_id = 1, .session_id = str_of(cmd, "sid")};
            char msg[192];

            err = claw_memory_request_gate_callback(&request, msg, sizeof(msg), NULL);
            cJSON_AddStringToObject(out, "msg", msg);
        } else if (strcmp(op, "delete") == 0) {
            bool any = false;

            err = claw_memory_delete_session_history(str_of(cmd, "sid"), &any);
            cJSON_AddBoolToObject(out, "deleted", any);
        } else if (strcmp(op, "store") == 0 || strcmp(op, "update") == 0) {
            claw_memory_item_t item;
            bool changed = false;

            item_from(cmd, &item);
            err = op[0] == 's' ? claw_memory_store_with_result(&item, &changed)
                               : claw_memory_update_with_result(&item, &changed);
            cJSON_AddStringToObject(out, "id", item.id);
            cJSON_AddBoolToObject(out, "changed", changed);
        } else if (strcmp(op, "forget") == 0) {
            err = claw_memory_forget(str_of(cmd, "id"));
        } else if (strcmp(op, "list") == 0) {
            char *json = NULL;

            err = claw_memory_list(&json);
            add_json_text(out, "json", json);
        } else if (strcmp(op, "recall") == 0) {
            const char *labels[3];
            cJSON *arr = cJSON_GetObjectItem(cmd, "labels"), *l;
            cJSON *lim = cJSON_GetObjectItem(cmd, "limit");
            claw_memory_query_t q = {.summary_labels = labels,
                                     .limit = cJSON_IsNumber(lim) ? (size_t)lim->valueint : 0};
            char *json = NULL;

            cJSON_ArrayForEach(l, arr) {
                if (q.summary_label_count < 3 && cJSON_IsString(l)) {
                    labels[q.summary_label_count++] = l->valuestring;
                }
            }
            err = claw_memory_recall(&q, &json);
            add_json_text(out, "json", json);
        } else if (strcmp(op, "mcompact") == 0) {
            extern esp_err_t claw_memory_compact_internal(bool append_digest);

            err = claw_memory_compact_internal(true);
        } else if (strncmp(op, "chat_", 5) == 0) {
            do_chat(op, cmd, out, &err);
        }
        reply(out, err);
        cJSON_Delete(cmd);
    }
    return 0;
}
