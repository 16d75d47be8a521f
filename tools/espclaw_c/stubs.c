/* Host stand-ins for what ESP-Claw's claw_memory links against besides its own sources:
 * ESP-IDF's error names, FreeRTOS ticks, claw_task, the LLM runtime (never used: the harness
 * leaves the asynchronous extraction off) and the core's stage-text publisher. MIT license. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "esp_err.h"
#include "claw_core.h"
#include "claw_task.h"
#include "llm/claw_llm_runtime.h"

const char *esp_err_to_name(esp_err_t code)
{
    switch (code) {
    case ESP_OK: return "ESP_OK";
    case ESP_FAIL: return "ESP_FAIL";
    case ESP_ERR_NO_MEM: return "ESP_ERR_NO_MEM";
    case ESP_ERR_INVALID_ARG: return "ESP_ERR_INVALID_ARG";
    case ESP_ERR_INVALID_STATE: return "ESP_ERR_INVALID_STATE";
    case ESP_ERR_INVALID_SIZE: return "ESP_ERR_INVALID_SIZE";
    case ESP_ERR_NOT_FOUND: return "ESP_ERR_NOT_FOUND";
    case ESP_ERR_NOT_SUPPORTED: return "ESP_ERR_NOT_SUPPORTED";
    case ESP_ERR_TIMEOUT: return "ESP_ERR_TIMEOUT";
    case ESP_ERR_INVALID_RESPONSE: return "ESP_ERR_INVALID_RESPONSE";
    default: return "ESP_ERR_UNKNOWN";
    }
}

size_t harness_strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = strlen(src);

    if (size) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

TickType_t xTaskGetTickCount(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (TickType_t)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

BaseType_t claw_task_create(const claw_task_config_t *config, TaskFunction_t task_func,
                            void *arg, TaskHandle_t *task_handle)
{
    (void)config; (void)task_func; (void)arg; (void)task_handle;
    return pdFAIL;
}

void claw_task_delete(TaskHandle_t task_handle)
{
    (void)task_handle;
}

esp_err_t claw_llm_runtime_init(claw_llm_runtime_t **out_runtime,
                                const claw_llm_runtime_config_t *config,
                                char **out_error_message)
{
    (void)config;
    *out_runtime = NULL;
    if (out_error_message) {
        *out_error_message = NULL;
    }
    return ESP_ERR_NOT_SUPPORTED;
}

esp_err_t claw_llm_runtime_chat(claw_llm_runtime_t *runtime, const claw_llm_chat_request_t *request,
                                claw_llm_response_t *out_response, char **out_error_message)
{
    (void)runtime; (void)request; (void)out_response;
    if (out_error_message) {
        *out_error_message = NULL;
    }
    return ESP_ERR_NOT_SUPPORTED;
}

void claw_llm_runtime_deinit(claw_llm_runtime_t *runtime)
{
    (void)runtime;
}

void claw_llm_response_free(claw_llm_response_t *response)
{
    (void)response;
}

esp_err_t claw_core_publish_stage_text(const claw_core_request_t *request, const char *text)
{
    (void)request;
    fprintf(stderr, "STAGE %s\n", text);
    return ESP_OK;
}
