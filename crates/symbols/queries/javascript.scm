; JavaScript (and JSX) definitions.
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (identifier) @name) @def.class
(method_definition name: (_) @name) @def.method
(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression)]) @def.method

; Variables: functions when the value is a function, else const / variable by
; the declaration keyword. Only module- (or namespace-) level ones are kept;
; extract.rs drops the locals of function bodies.
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @def.function)
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @def.function)
(lexical_declaration (variable_declarator name: (identifier) @name) @def.const)
(variable_declaration (variable_declarator name: (identifier) @name) @def.variable)
