; Python definitions. Functions inside classes become methods (extract.rs);
; module-level UPPER_CASE assignments are constants.
(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
(module
  (expression_statement
    (assignment left: (identifier) @name) @def.const))
