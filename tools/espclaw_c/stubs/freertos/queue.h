#pragma once
#include "freertos/FreeRTOS.h"
/* The asynchronous extraction is never started by the harness (no LLM): no queue. */
static inline QueueHandle_t harness_queue(void) { return (QueueHandle_t)0; }
static inline BaseType_t harness_queue_op(QueueHandle_t q, void *item) { (void)q; (void)item; return pdFAIL; }
#define xQueueCreate(n, sz) harness_queue()
#define xQueueSend(q, item, t) harness_queue_op(q, (void *)(item))
#define xQueueReceive(q, item, t) harness_queue_op(q, (void *)(item))
#define vQueueDelete(q) ((void)(q))
